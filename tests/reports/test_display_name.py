"""Method names read from the estimators' source equal the imported class's."""

import logging
import subprocess
import sys
from pathlib import Path

import yaml
from hydra.utils import get_class

from reports.error_tables import _static_class_attr, display_name

CONF = Path(__file__).resolve().parents[2] / "conf" / "method"


def _targets() -> set[str]:
    out: set[str] = set()

    def walk(o):
        if isinstance(o, dict):
            if "_target_" in o:
                out.add(o["_target_"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for f in CONF.glob("*.yaml"):
        walk(yaml.safe_load(f.read_text()))
    return out


def test_static_paper_name_equals_the_class_attribute():
    targets = _targets()
    assert {"methods.SVM", "methods.SVMm", "methods.SVMFDA"} <= targets
    resolved = 0
    for t in sorted(targets):
        module, name = t.rsplit(".", 1)
        static = _static_class_attr(module, name, "paper_name")
        cls = get_class(t)
        if static is not None:
            resolved += 1
            assert static == cls.paper_name, t
        assert display_name(t, "id") == getattr(cls, "paper_name", "id"), t
    assert resolved >= 10


def test_inherited_or_unknown_names_fall_back_to_the_import():
    # BaseKernelSVM's empty paper_name is inherited, not in a subclass body.
    assert _static_class_attr("methods.svm._base", "BaseKernelSVM", "paper_name") == ""
    assert _static_class_attr("methods", "NoSuchClass", "paper_name") is None
    assert display_name("methods.NoSuchClass", "svm") == "svm"
    assert display_name(None, "svm") == "svm"


def test_display_name_does_not_import_the_estimators():
    code = (
        "import sys; from reports.error_tables import display_name; "
        "assert display_name('methods.SVMm', 'svmm') == 'SVM_m'; "
        "assert 'methods' not in sys.modules, 'methods imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_class_that_cannot_be_imported_is_named_by_its_id_quietly(
    tmp_path, monkeypatch, caplog
):
    """A method of one's own (README: ``_target_: mine.Mine``) reported without its
    module on PYTHONPATH: no error printed above the table, the id as its name."""
    broken = tmp_path / "kml_test_broken_method.py"
    broken.write_text(
        "import kml_test_no_such_dependency\n\n\nclass Mine:\n"
        "    paper_name = compute()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with caplog.at_level(logging.INFO):
        assert display_name("kml_test_no_such_module.Mine", "mine") == "mine"
        assert display_name("kml_test_broken_method.Mine", "mine") == "mine"
        assert display_name("methods.NoSuchClass", "svm") == "svm"
    assert [r.getMessage() for r in caplog.records] == []
