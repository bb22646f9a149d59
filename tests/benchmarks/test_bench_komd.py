"""benchmarks/bench_komd.py: its ``--sizes`` forms, and part 2 naming its data."""

from __future__ import annotations

import sys
from contextlib import nullcontext

import pytest

from benchmarks import bench_komd


@pytest.mark.parametrize(
    "argv", [["200,500"], ["200", "500"], ["200,", "500"], ["200", "500,"]]
)
def test_sizes_comma_or_space_separated(monkeypatch, argv):
    seen = []
    monkeypatch.setattr(bench_komd, "one_blas_thread", nullcontext)
    monkeypatch.setattr(bench_komd, "part1", lambda repeat, sizes: seen.append(sizes))
    monkeypatch.setattr(bench_komd, "part2", lambda repeat: None)
    monkeypatch.setattr(sys, "argv", ["bench_komd.py", "--sizes", *argv])
    bench_komd.main()
    assert seen == [[200, 500]]


def test_part2_without_splice_says_its_data_is_synthetic(monkeypatch, capsys):
    monkeypatch.setattr(bench_komd, "_splice", lambda: None)
    bench_komd.part2(1)
    out = capsys.readouterr().out
    assert "## ARBF iteration on synthetic data (splice_libsvm unavailable)" in out
    assert "on splice" not in out
