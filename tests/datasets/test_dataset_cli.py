"""``python -m datasets`` / ``kml-datasets``: the table, --paper, --check."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from datasets import REGISTRY
from datasets.__main__ import main
from datasets._sources import repo_root


def _rows(out: str) -> dict[str, str]:
    """Table rows keyed by dataset name (header and footer left out)."""
    return {
        line.split()[0]: line
        for line in out.splitlines()
        if line.split() and line.split()[0] in REGISTRY
    }


def test_listing_counts(capsys, mirror):
    assert main([]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert list(rows) == list(REGISTRY)
    statuses = [row.split("  ")[-1].strip() for row in rows.values()]
    assert sum(s == "available" for s in statuses) == 29
    assert sum(s.startswith("unavailable: ") for s in statuses) == 5
    assert "29 available, 5 unavailable, 1 stand-in, 0 missing" in out
    assert (
        "stand-in for ovarian, stroke, male_female, prostate_proteomics"
        in (rows["arcene_standin"])
    )
    assert "2000x649 (6 views)" in rows["mfeat"]
    assert "derived:pima" in rows["diabetes_libsvm"]


def test_listing_names_a_mirror_that_is_not_a_folder(capsys, empty_dir):
    absent = empty_dir / "no-such-mirror"
    assert main(["--mirror", str(absent), "--cache-dir", str(empty_dir)]) == 0
    err = capsys.readouterr().err
    assert f"The data mirror {absent} is not a folder" in err
    assert "set DATA_MIRROR (or pass --mirror)" in err


def test_listing_names_a_folder_without_the_manifest(capsys, tmp_path):
    """Every 'missing' row of a folder that is not the mirror has that one cause."""
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "MANIFEST.md").write_text("# Dataset manifest\n")
    args = ["--mirror", str(tmp_path), "--cache-dir", str(tmp_path / "cache")]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert (
        f"The data mirror {tmp_path} has no MANIFEST.md ({tmp_path / 'datasets'} "
        "has one): set DATA_MIRROR (or pass --mirror)"
    ) in err


def test_listing_is_quiet_about_an_existing_mirror(capsys, mirror):
    assert main([]) == 0
    assert "not a folder" not in capsys.readouterr().err


def test_listing_filters_by_paper(capsys, mirror):
    assert main(["--paper", "mlsvm"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert list(rows) == [
        "sonar",
        "wpbc",
        "ionosphere",
        "wdbc",
        "liver_bupa",
        "musk1",
        "ovarian",
        "stroke",
        "arcene_standin",
    ]


def test_listing_marks_missing_files(capsys, empty_dir):
    assert main(["--mirror", str(empty_dir), "--cache-dir", str(empty_dir)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert "missing: no copy of sonar/sonar.tsv.gz" in rows["sonar"]
    assert rows["wdbc"].endswith("available")  # scikit-learn ships it


def test_check_passes(capsys, mirror):
    assert main(["--check"]) == 0
    out = capsys.readouterr().out
    assert out.count("\nok    ") == 30
    assert "all checks passed" in out


def test_check_fails_on_a_bad_file(capsys, mirror_copy, empty_dir):
    root = mirror_copy("heart_libsvm")
    path = root / "heart_libsvm" / "heart_scale"
    path.write_bytes(path.read_bytes() + b"\n")
    code = main(
        [
            "--check",
            "--paper",
            "arbf",
            "--mirror",
            str(root),
            "--cache-dir",
            str(empty_dir),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert "FAIL  heart_libsvm: ChecksumMismatchError" in captured.out
    # The other arbf sets are not in this private mirror.
    assert "DatasetUnavailableError" in captured.err


def test_module_entry_point_runs(mirror):
    done = subprocess.run(
        [sys.executable, "-m", "datasets", "--paper", "E"],
        cwd=repo_root(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ionosphere_libsvm" in done.stdout


def test_console_script_is_declared():
    scripts = importlib.metadata.entry_points(group="console_scripts")
    (script,) = [s for s in scripts if s.name == "kml-datasets"]
    assert script.value == "datasets.__main__:main"


def test_help_gives_the_defaults_the_readme_gives(capsys):
    """README, "Data": DATA_MIRROR defaults to ../shared/datasets beside the
    repository and KML_CACHE to ~/.cache/kml-repro; --help named the variables
    only, as if nothing were read when they are unset."""
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "$DATA_MIRROR, else ../shared/datasets beside the repository" in help_text
    assert "$KML_CACHE, else ~/.cache/kml-repro" in help_text
    readme = " ".join((repo_root() / "README.md").read_text().split())
    assert "`DATA_MIRROR` (default `../shared/datasets`, beside the repository)" in (
        readme
    )
    assert "(`KML_CACHE`, default `~/.cache/kml-repro`)" in readme
