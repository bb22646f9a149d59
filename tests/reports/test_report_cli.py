"""kml-report says which files of the generated folder it changed, and where a
subcommand goes."""

from __future__ import annotations

import pytest

from reports.__main__ import _changes, _digests, main


def test_changes_name_changed_new_and_removed_files(tmp_path):
    (tmp_path / "table1.md").write_text("same")
    (tmp_path / "fig2_times.csv").write_text("1.0")
    (tmp_path / "old.csv").write_text("x")
    before = _digests(tmp_path)
    (tmp_path / "table1.md").write_text("same")  # rewritten as it was
    (tmp_path / "fig2_times.csv").write_text("1.1")
    (tmp_path / "table1.tex").write_text("new")
    (tmp_path / "old.csv").unlink()
    line = _changes(tmp_path, before, _digests(tmp_path))
    assert "changed: fig2_times.csv" in line
    assert "new: table1.tex" in line
    assert "removed: old.csv" in line
    assert "(1 unchanged)" in line


def test_no_change_says_so(tmp_path):
    (tmp_path / "table1.md").write_text("same")
    before = _digests(tmp_path)
    assert _changes(tmp_path, before, _digests(tmp_path)).endswith("no file changed")
    assert _digests(tmp_path / "missing") == {}


@pytest.mark.parametrize(
    "argv,sub",
    [
        (["--out", "DIR", "site"], "site"),
        (["--results", "R", "compare", "mlsvm_table1", "--method", "m"], "compare"),
        (["--mcnemar", "exact", "site"], "site"),
    ],
)
def test_subcommand_after_an_option_names_where_it_goes(capsys, argv, sub):
    """argparse said "invalid choice: 'site' (choose from <experiments>)", as if
    site were no command at all."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{sub} is a subcommand and comes first" in err
    assert f"kml-report {sub} " in err
    assert "invalid choice" not in err


def test_a_folder_named_site_is_still_an_option_value(tmp_path, capsys):
    """`--out site` is a value, not the subcommand: the report runs (here it stops
    at the empty result store, exit 2, naming it)."""
    code = main(["mlsvm_table1", "--results", str(tmp_path / "none"), "--out", "site"])
    assert code == 2
    assert "result folder" in capsys.readouterr().err


@pytest.mark.parametrize("experiment", ["wrbf_table1", "arbf_table1", "kdml",
                                        "kdml_reduced", "mlsvm_table1_checks"])
def test_mcnemar_on_a_report_without_mcnemar_is_a_usage_error(capsys, experiment):
    """--mcnemar exact was accepted and dropped (a ``**_`` swallowed it) by the
    reports that have no McNemar test; the table said nothing of it."""
    with pytest.raises(SystemExit) as exc:
        main([experiment, "--mcnemar", "exact", "--results", "nowhere"])
    assert exc.value.code == 2
    assert f"--mcnemar: {experiment} has no McNemar test" in capsys.readouterr().err


def test_mcnemar_reaches_the_reports_that_have_it(monkeypatch, tmp_path):
    import reports.lmnnmkl
    import reports.mlsvm

    seen = []

    def fake(results, out_dir=None, mcnemar_method=None, variants=False):
        seen.append(mcnemar_method)
        (tmp_path / "t.md").write_text("x")
        return tmp_path / "t.md"

    for module, func in ((reports.mlsvm, "table1"), (reports.mlsvm, "table2"),
                         (reports.lmnnmkl, "table1"), (reports.lmnnmkl, "table2")):
        monkeypatch.setattr(module, func, fake)
    for experiment in ("mlsvm_table1", "mlsvm_table2", "lmnnmkl_table1",
                       "lmnnmkl_table2"):
        assert main([experiment, "--out", str(tmp_path), "--mcnemar", "exact"]) == 0
        assert main([experiment, "--out", str(tmp_path)]) == 0
    assert seen == ["exact", "chi2_cc"] * 4


def test_help_names_each_subcommand_with_its_options(capsys):
    """The epilog said "kml-report site [--out DIR]", leaving out --results; each
    subcommand's usage there now names options its own parser has."""
    import re

    from reports.__main__ import SUBCOMMAND_USAGE

    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for sub, usage in SUBCOMMAND_USAGE.items():
        assert usage in text
        with pytest.raises(SystemExit):
            main([sub, "--help"])
        sub_help = capsys.readouterr().out
        assert set(re.findall(r"--[a-z]+", usage)) <= set(
            re.findall(r"--[a-z]+", sub_help)
        ), sub
    assert "[--results DIR]" in SUBCOMMAND_USAGE["site"]


@pytest.mark.parametrize(
    "argv",
    [
        ["mlsvm_table1", "--out", ""],
        ["site", "--out", ""],
        ["compare", "mlsvm_table1", "--method", "m", "--csv", ""],
    ],
)
def test_an_empty_output_path_is_a_usage_error(tmp_path, monkeypatch, capsys, argv):
    """--out "" (--out "$OUT", OUT unset) wrote the table files into the current
    folder, the site's too; --csv "" wrote nothing. Neither said so."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--results", str(tmp_path / "none")])
    assert exc.value.code == 2
    assert "empty; give a path" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
