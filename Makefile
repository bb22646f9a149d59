# One entry point for users and CI. Every target creates the environment when missing.
SHELL := /bin/bash
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYVER := $(shell $(PY) -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")' 2>/dev/null)
LOCK := constraints/py$(PYVER).txt
STAMP := $(VENV)/.installed-$(PYVER)
RESULTS ?= $(or $(KML_RESULTS),results)
export KML_RESULTS := $(RESULTS)

.PHONY: setup lock test test-fast lint bench reproduce-table1 reproduce-mlsvm-table1 \
        report-mlsvm-table1 check-table1 reproduce-mlsvm-table2 reproduce-wrbf reproduce-wrbf-table1 reproduce-all datasets clean-results help

help:
	@echo "make setup               create $(VENV) and install the pinned environment"
	@echo "make test                run the whole test suite (what CI runs)"
	@echo "make reproduce-table1    rerun mlsvm Table I + Fig. 2 and rebuild the report"
	@echo "make check-table1        recompute the checks behind Table I's listed divergences"
	@echo "make reproduce-mlsvm-table2  rerun mlsvm Table II (MKL, 20 kernels)"
	@echo "make reproduce-wrbf      rerun wrbf Table 1, Fig. 2, z and r"
	@echo "make reproduce-arbf      rerun arbf Table 1 + Fig. 2 (AUC, 6 methods x 6 datasets)"
	@echo "make datasets            list every dataset and where it comes from"
	@echo "make bench               solver benchmarks (ratios against references)"

setup: $(STAMP)

$(STAMP): pyproject.toml $(wildcard $(LOCK))
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip
	@if [ -f $(LOCK) ]; then \
	  $(BIN)/python -m pip install -q -c $(LOCK) -e ".[dev]"; \
	else \
	  echo "no lock file $(LOCK) for this Python; installing unpinned versions"; \
	  $(BIN)/python -m pip install -q -e ".[dev]"; \
	fi
	@touch $(STAMP)

lock: setup  ## rewrite the lock file of this Python from the current environment
	@{ echo "# Exact versions for \`make setup\` (pip install -c $(LOCK) -e .[dev])."; \
	   echo "# Regenerate with: make lock"; \
	   $(BIN)/python -m pip freeze --exclude-editable; } > $(LOCK)

test: setup
	$(BIN)/python -m pytest

test-fast: setup
	$(BIN)/python -m pytest -m "not regression and not slow"

lint: setup
	$(BIN)/ruff check .

datasets: setup
	$(BIN)/python -m datasets

bench: setup
	$(BIN)/python benchmarks/bench_qp.py

reproduce-table1 reproduce-mlsvm-table1: setup
	@start=$$(date +%s); \
	$(BIN)/python -m runners.run experiment=mlsvm_table1 $(ARGS) && \
	$(BIN)/python -m reports mlsvm_table1 && \
	echo "reproduce-table1 wall time: $$(( $$(date +%s) - start )) s"

report-mlsvm-table1: setup
	$(BIN)/python -m reports mlsvm_table1

check-table1: setup
	@start=$$(date +%s); \
	$(BIN)/python -m reports mlsvm_table1_checks && \
	echo "check-table1 wall time: $$(( $$(date +%s) - start )) s"

reproduce-mlsvm-table2: setup
	@start=$$(date +%s); \
	$(BIN)/python -m runners.run experiment=mlsvm_table2 $(ARGS) && \
	$(BIN)/python -m reports mlsvm_table2 && \
	echo "reproduce-mlsvm-table2 wall time: $$(( $$(date +%s) - start )) s"

reproduce-wrbf reproduce-wrbf-table1: setup
	@start=$$(date +%s); \
	$(BIN)/python -m runners.run experiment=wrbf_table1 $(ARGS) && \
	$(BIN)/python -m reports wrbf_table1 && \
	echo "reproduce-wrbf wall time: $$(( $$(date +%s) - start )) s"

.PHONY: reproduce-arbf reproduce-arbf-table1
reproduce-arbf reproduce-arbf-table1: setup
	@start=$$(date +%s); \
	$(BIN)/python -m runners.run experiment=arbf_table1 $(ARGS) && \
	$(BIN)/python -m runners.run experiment=arbf_table1 method=arbf_t150 $(ARGS) && \
	$(BIN)/python -m reports arbf_table1 && \
	echo "reproduce-arbf wall time: $$(( $$(date +%s) - start )) s"

reproduce-all: reproduce-table1 reproduce-mlsvm-table2 reproduce-wrbf

clean-results:
	rm -rf $(RESULTS) outputs
