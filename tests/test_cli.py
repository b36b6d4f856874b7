import json
import subprocess
import sys

import pytest

from course_lib.cli import main
from course_lib.datasets import fetch_cmrc2018

JSON_KEYS = {"pipeline", "questions", "skipped", "recall@1", "recall@3", "recall@5", "mrr@5",
             "context_relevance@1", "context_relevance@3", "context_relevance@5", "seconds"}


def test_pipelines_lists_names(capsys):
    assert main(["pipelines"]) == 0
    out = capsys.readouterr().out
    assert "bm25-coarse " in out and "bm25-paragraph " in out


def test_evaluate_bm25_paragraph_meets_targets(cmrc_kb, tmp_path, capsys):
    out_json = tmp_path / "r.json"
    assert main(["evaluate", "--squad", str(fetch_cmrc2018()), "--pipeline", "bm25-paragraph",
                 "--json", str(out_json)]) == 0
    result = json.loads(out_json.read_text())
    assert JSON_KEYS <= set(result)
    assert result["questions"] == 1000 and result["skipped"] == 2
    assert result["recall@1"] >= 0.95 and result["recall@5"] >= 0.985
    assert "recall" in capsys.readouterr().out


def test_evaluate_chunks_reports_span_recall(cmrc_kb, tmp_path):
    out_json = tmp_path / "r.json"
    main(["evaluate", "--squad", str(fetch_cmrc2018()), "--pipeline", "bm25-coarse",
          "--json", str(out_json)])
    result = json.loads(out_json.read_text())
    # Big chunks contain the answer far more often than they "hit" the paragraph.
    assert result["span_recall@5"] > result["recall@5"] + 0.3


def test_reproduce_prints_chapter_beside_ours(cmrc_kb, tmp_path):
    out_json = tmp_path / "rep.json"
    run = subprocess.run([sys.executable, "-m", "course_lib", "reproduce", "--json", str(out_json)],
                         capture_output=True, text=True, check=True)
    assert "0.94→0.948" in run.stdout and "0.94→0.966" in run.stdout
    report = json.loads(out_json.read_text())
    rows = report["tables"]["chunks_vs_paragraphs"]["rows"]
    assert {r["pipeline"] for r in rows} == {"bm25-coarse", "bm25-coarse-gpt2", "bm25-paragraph",
                                             "bm25-paragraph-lazyllm"}


def test_bad_input_gives_exit_code_2(tmp_path, capsys):
    assert main(["evaluate", "--squad", str(tmp_path / "none.json"), "--pipeline", "x"]) == 2
    assert "error:" in capsys.readouterr().err
    (tmp_path / "empty.json").write_text('{"data": []}')
    assert main(["evaluate", "--squad", str(tmp_path / "empty.json"),
                 "--pipeline", "nope"]) == 2


# ---------------------------------------------------------------- bad arguments, clean failures
def small_squad(path):
    qa = {"id": "q1", "question": "长城是什么工程？",
          "answers": [{"text": "军事防御工程", "answer_start": 9}]}
    data = {"data": [{"paragraphs": [
        {"context": "长城是中国古代的军事防御工程。", "qas": [qa]},
        {"context": "熊猫主要吃竹子。", "qas": []}]}]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_evaluate_on_a_small_file_writes_json_and_nothing_else(tmp_path, capsys):
    squad = small_squad(tmp_path / "s.json")
    assert main(["evaluate", "--squad", str(squad), "--pipeline", "bm25-paragraph",
                 "--docs-per-file", "1", "--json", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["recall@1"] == 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "s.json"]


def test_a_failure_during_the_work_is_one_line_and_leaves_no_file(tmp_path, capsys, monkeypatch):
    def broken(kb, pipeline):
        raise ValueError("the pipeline broke\nhalfway")

    monkeypatch.setattr("course_lib.evaluation.evaluate", broken)
    squad = small_squad(tmp_path / "s.json")
    assert main(["evaluate", "--squad", str(squad), "--pipeline", "bm25-paragraph",
                 "--json", str(tmp_path / "r.json")]) == 2
    assert capsys.readouterr().err == ("python -m course_lib evaluate: error: "
                                       "the pipeline broke halfway\n")
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_json_is_written_atomically_and_a_failed_write_leaves_the_old_file(tmp_path,
                                                                           monkeypatch):
    from course_lib import cli
    target = tmp_path / "r.json"
    cli._write_json({"a": 1}, target)
    assert json.loads(target.read_text()) == {"a": 1}

    def no_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.os, "replace", no_replace)
    with pytest.raises(OSError, match="No space"):
        cli._write_json({"a": 2}, target)
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no .tmp left behind


def test_an_unwritable_json_folder_is_refused_before_work(tmp_path, capsys, monkeypatch):
    # Root may write anywhere, so the refusal is simulated where the check tries it.
    from course_lib import cli

    def refuse(**kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli.tempfile, "mkstemp", refuse)
    monkeypatch.setattr("course_lib.evaluation.evaluate", None)  # reaching it would fail
    squad = small_squad(tmp_path / "s.json")
    assert main(["evaluate", "--squad", str(squad), "--pipeline", "bm25-paragraph",
                 "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --json: cannot write into the folder" in err
    assert "(Permission denied); choose a folder you can write to" in err


def test_main_returns_argparse_exits_instead_of_raising(capsys):
    assert main(["evaluate", "--squad", "x.json"]) == 2  # --pipeline missing
    assert "the following arguments are required: --pipeline" in capsys.readouterr().err
    assert main(["--help"]) == 0


def test_the_module_exits_with_status_2_and_one_line(tmp_path):
    run = subprocess.run([sys.executable, "-m", "course_lib", "evaluate", "--squad",
                          str(tmp_path / "none.json"), "--pipeline", "bm25-paragraph"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith(
        "python -m course_lib evaluate: error: argument --squad: ")
    assert "none.json" in run.stderr
