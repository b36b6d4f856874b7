"""The command line's argument checks (course_lib.lab.cli_arguments): each refusal names the
option and what is allowed, a check writes nothing, and a result is written atomically."""

import argparse
import json
import os

import pytest

from course_lib.lab import cli_arguments as ca
from course_lib.lab.cli_arguments import (
    _BadArgument,
    _check_distinct,
    _check_json_target,
    _check_pipeline,
    _check_pipelines,
    _check_squad,
    _check_target,
    _positive_int,
    _write_json,
)


def squad_file(path, questions=True):
    qas = [{"id": "q1", "question": "熊猫吃什么？", "answers": [{"text": "竹子",
                                                              "answer_start": 4}]}]
    data = {"data": [{"title": "t", "paragraphs": [
        {"context": "熊猫主要吃竹子。", "qas": qas if questions else []}]}]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------- --docs-per-file
@pytest.mark.parametrize("text, value", [("1", 1), ("12", 12), (" 7 ", 7)])
def test_positive_int_accepts_whole_numbers_from_one(text, value):
    assert _positive_int(text) == value


@pytest.mark.parametrize("text, shown", [("0", "got 0"), ("-3", "got -3"),
                                         ("x", "got 'x'"), ("1.5", "got '1.5'")])
def test_positive_int_refuses_and_says_what_is_allowed(text, shown):
    with pytest.raises(argparse.ArgumentTypeError, match="must be a whole number ≥ 1") as info:
        _positive_int(text)
    assert str(info.value).endswith(shown)


# ---------------------------------------------------------------- output paths
def test_a_writable_target_is_returned_and_nothing_is_left_behind(tmp_path):
    assert _check_target(None) is None
    assert _check_target(str(tmp_path / "out.json")) == tmp_path / "out.json"
    old = tmp_path / "old.json"
    old.write_text("keep")
    assert _check_json_target(str(old)) == old
    assert old.read_text() == "keep"
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]  # the probe file is gone


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_name_is_refused_with_the_options_example(blank):
    with pytest.raises(_BadArgument, match=r"^argument --json: give a file name, "
                                           r"e\.g\. --json result\.json$"):
        _check_json_target(blank)
    with pytest.raises(_BadArgument, match=r"^argument --run: give a file name, e\.g\. "
                                           r"--run run\.txt$"):
        _check_target(blank, "--run", "run.txt")


def test_a_folder_is_refused_with_a_file_inside_it_suggested(tmp_path):
    with pytest.raises(_BadArgument) as info:
        _check_target(str(tmp_path), "--qrels", "qrels.txt")
    message = str(info.value)
    assert message.startswith(f"argument --qrels: {tmp_path} is a folder")
    assert message.endswith(f"e.g. --qrels {tmp_path / 'qrels.txt'}")


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_something_that_is_not_a_regular_file_is_refused():
    with pytest.raises(_BadArgument, match="argument --json: /dev/null exists and is not a "
                                           "regular file"):
        _check_json_target("/dev/null")


def test_a_missing_folder_or_a_file_as_folder_is_named(tmp_path):
    with pytest.raises(_BadArgument, match=r"the folder .*missing does not exist; create it"):
        _check_json_target(str(tmp_path / "missing" / "r.json"))
    (tmp_path / "plain").write_text("")
    with pytest.raises(_BadArgument, match=r"argument --json: the folder .*plain is not a "
                                           r"folder"):
        _check_json_target(str(tmp_path / "plain" / "r.json"))
    assert not (tmp_path / "missing").exists()  # nothing was created


def test_a_folder_that_refuses_the_probe_is_refused(tmp_path, monkeypatch):
    def read_only(**kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(ca.tempfile, "mkstemp", read_only)
    with pytest.raises(_BadArgument, match=r"^argument --run: cannot write into the folder "
                                           r".*\(Read-only file system\)"):
        _check_target(str(tmp_path / "r.txt"), "--run")


def test_two_outputs_naming_one_file_are_refused(tmp_path):
    json_path, run_path = tmp_path / "a.json", tmp_path / "b.txt"
    _check_distinct({"--json": json_path, "--run": run_path, "--qrels": None})  # fine
    _check_distinct({"--json": None, "--run": None})
    same = tmp_path / "sub" / ".." / "a.json"  # another spelling of the same file
    with pytest.raises(_BadArgument, match=r"^argument --qrels: .* is also the --json file; "
                                           r"give each output its own file$"):
        _check_distinct({"--json": json_path, "--run": run_path, "--qrels": same})


# ---------------------------------------------------------------- --squad
def test_a_good_squad_file_is_read(tmp_path):
    squad = _check_squad(squad_file(tmp_path / "s.json"))
    assert [q.id for q in squad.questions] == ["q1"]
    assert squad.questions[0].answers == ["竹子"]


def test_squad_problems_are_one_message_naming_the_option(tmp_path):
    with pytest.raises(_BadArgument, match=r"^argument --squad: .*none\.json: "):
        _check_squad(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(_BadArgument, match=r"^argument --squad: .*bad\.json is not valid JSON"):
        _check_squad(str(tmp_path / "bad.json"))
    empty = squad_file(tmp_path / "empty.json", questions=False)
    with pytest.raises(_BadArgument, match=r"^argument --squad: .*empty\.json has no "
                                           r"\(non-empty\) questions to evaluate"):
        _check_squad(empty)


# ---------------------------------------------------------------- pipelines
def test_a_known_pipeline_passes_and_a_typo_gets_close_names():
    assert _check_pipeline("bm25-paragraph") == "bm25-paragraph"
    with pytest.raises(_BadArgument) as info:
        _check_pipeline("bm25-paragraf")
    message = str(info.value)
    assert message.startswith("argument --pipeline: unknown pipeline 'bm25-paragraf'; "
                              "did you mean bm25-paragraph")
    assert "`python -m course_lib pipelines` lists them all" in message


def test_a_name_like_none_lists_every_pipeline_under_the_given_option():
    from course_lib.lab.systems.pipelines import PIPELINES

    with pytest.raises(_BadArgument) as info:
        _check_pipeline("zzzzqqq", "--baseline")
    message = str(info.value)
    assert message.startswith("argument --baseline: unknown pipeline 'zzzzqqq'; choose one of ")
    assert message.endswith(", ".join(sorted(PIPELINES)))


def test_compare_pipelines_and_their_baseline():
    names = ["bm25-paragraph", "bm25-coarse", "hybrid-rrf"]
    assert _check_pipelines(names, None) == (names, "bm25-paragraph")
    assert _check_pipelines(names, "hybrid-rrf") == (names, "hybrid-rrf")


@pytest.mark.parametrize("names, baseline, message", [
    (["bm25-paragraph", "nope"], None, r"^argument PIPELINE: unknown pipeline 'nope'"),
    (["bm25-paragraph", "bm25-coarse", "bm25-paragraph"], None,
     r"^argument PIPELINE: 'bm25-paragraph' is named twice; name each pipeline once$"),
    (["bm25-paragraph"], None, r"^argument PIPELINE: compare needs at least two pipelines, "
                               r"got only 'bm25-paragraph'"),
    (["bm25-paragraph", "bm25-coarse"], "nope", r"^argument --baseline: unknown pipeline"),
    (["bm25-paragraph", "bm25-coarse"], "hybrid-rrf",
     r"^argument --baseline: 'hybrid-rrf' is not among the pipelines compared "
     r"\(bm25-paragraph, bm25-coarse\)"),
])
def test_compare_refusals_name_the_argument(names, baseline, message):
    with pytest.raises(_BadArgument, match=message):
        _check_pipelines(names, baseline)


# ---------------------------------------------------------------- writing a result
def test_write_json_writes_readable_unicode_json_or_nothing(tmp_path):
    _write_json({"a": 1}, None)
    assert list(tmp_path.iterdir()) == []
    target = tmp_path / "r.json"
    _write_json({"问题": "长城", "n": [1, 2]}, target)
    text = target.read_text(encoding="utf-8")
    assert "长城" in text and "\\u" not in text  # not escaped
    assert text == json.dumps({"问题": "长城", "n": [1, 2]}, ensure_ascii=False, indent=2)
    _write_json({"b": 2}, target)  # replaces the whole file
    assert json.loads(target.read_text(encoding="utf-8")) == {"b": 2}


def test_data_that_cannot_be_json_leaves_the_old_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "r.json"
    _write_json({"kept": True}, target)
    with pytest.raises(TypeError):
        _write_json({"bad": object()}, target)
    assert json.loads(target.read_text()) == {"kept": True}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
