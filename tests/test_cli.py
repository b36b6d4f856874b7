import json
import subprocess
import sys

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
