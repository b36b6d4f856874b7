"""Names that moved (course_lib._support.moved.moved_names, and the lab's finder of old
module names): the old place gives the new object, warns with the new place, and knows
nothing else; the old module imports the new one only when a moved name is asked for."""

import importlib
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

import course_lib.coverage
import course_lib.flow
import course_lib.fusion
import course_lib.text_tokens
import course_lib.word_tags
from course_lib._support.moved import moved_names

ROOT = Path(__file__).resolve().parents[2]


def old_module(name: str, new_home: dict[str, str]) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__getattr__ = moved_names(name, new_home)
    return module


def test_an_old_name_gives_the_new_modules_object_and_warns_with_its_place():
    import json

    old = old_module("old_home", {"dumps": "json", "sqrt": "math"})
    with pytest.warns(DeprecationWarning) as caught:
        assert old.dumps is json.dumps
    assert [str(w.message) for w in caught] == ["old_home.dumps is now json.dumps"]
    assert caught[0].filename == __file__  # stacklevel: the line that asked for the name


def test_every_use_warns_not_only_the_first():
    old = old_module("old_home", {"sqrt": "math"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            assert old.sqrt(4.0) == 2.0
    assert len(caught) == 3 and {w.category for w in caught} == {DeprecationWarning}


def test_an_unknown_name_is_an_attribute_error_and_does_not_warn():
    old = old_module("old_home", {"sqrt": "math"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="^module 'old_home' has no attribute 'cbrt'$"):
            old.cbrt  # noqa: B018
        assert not hasattr(old, "nothing")
        assert getattr(old, "nothing", "default") == "default"


def test_the_new_module_is_imported_only_when_a_moved_name_is_asked_for(tmp_path, monkeypatch):
    (tmp_path / "fresh_new_home.py").write_text("VALUE = 42\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fresh_new_home", raising=False)
    old = old_module("old_home", {"VALUE": "fresh_new_home"})
    with pytest.raises(AttributeError):
        old.OTHER  # noqa: B018
    assert "fresh_new_home" not in sys.modules
    with pytest.warns(DeprecationWarning, match="old_home.VALUE is now fresh_new_home.VALUE"):
        assert old.VALUE == 42
    assert "fresh_new_home" in sys.modules
    monkeypatch.delitem(sys.modules, "fresh_new_home")


# ------------------------------------------------------------------ the real uses
def test_pipeline_from_fusion_is_the_one_of_flow_with_a_warning():
    with pytest.warns(DeprecationWarning,
                      match=r"^course_lib\.fusion\.pipeline is now course_lib\.flow\.pipeline$"):
        from course_lib.fusion import pipeline
    assert pipeline is course_lib.flow.pipeline
    for name in ("INPUT", "PREVIOUS", "bind", "parallel"):
        with pytest.warns(DeprecationWarning, match=f"is now course_lib.flow.{name}"):
            assert getattr(course_lib.fusion, name) is getattr(course_lib.flow, name)
    with pytest.raises(AttributeError, match="module 'course_lib.fusion' has no attribute"):
        course_lib.fusion.no_such_name  # noqa: B018


def test_the_coverage_rule_and_the_tags_from_text_tokens_are_their_new_modules():
    with pytest.warns(DeprecationWarning, match=r"^course_lib\.text_tokens\.coverage is now "
                                                r"course_lib\.coverage\.coverage$"):
        assert course_lib.text_tokens.coverage is course_lib.coverage.coverage
    with pytest.warns(DeprecationWarning, match="is now course_lib.word_tags.tagged_words"):
        assert course_lib.text_tokens.tagged_words is course_lib.word_tags.tagged_words
    with pytest.raises(AttributeError):
        course_lib.text_tokens.no_such_name  # noqa: B018


def test_a_lab_module_by_its_old_flat_name_is_the_same_module():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old = importlib.import_module("course_lib.lab.wins")
    new = importlib.import_module("course_lib.lab.measure.wins")
    assert old is new and sys.modules["course_lib.lab.wins"] is new  # one module, one state
    assert new.__spec__.name == "course_lib.lab.measure.wins"  # its own spec, kept
    assert new.__name__ == "course_lib.lab.measure.wins"


def test_modules_that_were_never_flat_have_no_old_name():
    for name in ("course_lib.lab.detector", "course_lib.lab.answerability_set",
                 "course_lib.lab.not_a_module"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def run(code: str, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *options, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_the_lab_old_name_warns_with_the_new_one_in_a_fresh_process():
    # A fresh process: once imported, the old name is cached in sys.modules and does not
    # warn again, so an in-process check would depend on the order of the tests.
    out = run("import course_lib.lab.wins", "-W", "error::DeprecationWarning")
    assert out.returncode != 0
    assert ("DeprecationWarning: course_lib.lab.wins is now course_lib.lab.measure.wins"
            in out.stderr), out.stderr
    out = run("import importlib, pickle, sys\n"
              "from course_lib.lab.wins import win_loss\n"
              "module = importlib.reload(sys.modules['course_lib.lab.wins'])\n"
              "print(module.__spec__.name, pickle.loads(pickle.dumps(module.win_loss)) is "
              "module.win_loss)", "-W", "ignore::DeprecationWarning")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["course_lib.lab.measure.wins", "True"]  # reload, pickle
