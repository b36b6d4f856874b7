import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.lab.cli import main
from course_lib.lab.data.datasets import fetch_cmrc2018

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
    run = subprocess.run([sys.executable, "-m", "course_lib", "reproduce", "--json", str(out_json),
                          "--table", "chunks_vs_paragraphs"],  # the whole report: test_reproducible
                         capture_output=True, text=True, check=True)
    assert "0.94→0.948" in run.stdout and "0.94→0.966" in run.stdout
    report = json.loads(out_json.read_text())
    rows = report["tables"]["chunks_vs_paragraphs"]["rows"]
    assert {r["pipeline"] for r in rows} == {"bm25-coarse", "bm25-coarse-gpt2", "bm25-paragraph",
                                             "bm25-paragraph-lazyllm"}
    assert list(report["tables"]) == ["chunks_vs_paragraphs"] and "held_out" not in report


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

    monkeypatch.setattr("course_lib.lab.measure.evaluation.evaluate", broken)
    squad = small_squad(tmp_path / "s.json")
    assert main(["evaluate", "--squad", str(squad), "--pipeline", "bm25-paragraph",
                 "--json", str(tmp_path / "r.json")]) == 2
    assert capsys.readouterr().err == ("python -m course_lib evaluate: error: "
                                       "the pipeline broke halfway\n")
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_json_is_written_atomically_and_a_failed_write_leaves_the_old_file(tmp_path,
                                                                           monkeypatch):
    from course_lib.lab import cli, cli_arguments
    target = tmp_path / "r.json"
    cli._write_json({"a": 1}, target)
    assert json.loads(target.read_text()) == {"a": 1}

    def no_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_arguments.os, "replace", no_replace)
    with pytest.raises(OSError, match="No space"):
        cli._write_json({"a": 2}, target)
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no .tmp left behind


def test_an_unwritable_json_folder_is_refused_before_work(tmp_path, capsys, monkeypatch):
    # Root may write anywhere, so the refusal is simulated where the check tries it.
    from course_lib.lab import cli_arguments

    def refuse(**kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli_arguments.tempfile, "mkstemp", refuse)
    monkeypatch.setattr("course_lib.lab.measure.evaluation.evaluate", None)  # reached: fails
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


# ---------------------------------------------------------------- compare, TREC files, data
def test_compare_prints_intervals_and_mcnemar_equal_to_scipy(cmrc_kb, tmp_path, capsys):
    from scipy.stats import binomtest

    from course_lib.lab.measure.evaluation import evaluate

    out_json = tmp_path / "c.json"
    assert main(["compare", "--squad", str(fetch_cmrc2018()), "bm25-paragraph",
                 "bm25-char-paragraph", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    report = json.loads(out_json.read_text())
    assert report["baseline"] == "bm25-paragraph" and report["questions"] == 1000
    columns = {name: evaluate(cmrc_kb, name)["per_question"]
               for name in ("bm25-paragraph", "bm25-char-paragraph")}
    for name, table in columns.items():  # each metric with its exact interval, printed
        hits = sum(table["recall@1"])
        ci = binomtest(int(hits), 1000).proportion_ci(0.95, method="exact")
        cell = report["pipelines"][name]["recall@1"]
        assert cell == {"mean": hits / 1000, "low": round(ci.low, 4), "high": round(ci.high, 4)}
        assert f"{cell['mean']:.4f}  [{cell['low']:.4f}, {cell['high']:.4f}]" in out
        assert set(report["pipelines"][name]) == {"recall@1", "recall@5", "mrr@5", "ndcg@10",
                                                  "context_relevance@5"}
    rows = {row["metric"]: row for row in report["comparisons"]}
    assert set(rows) == {"recall@1", "recall@5", "mrr@5", "ndcg@10"}
    for metric in ("recall@1", "recall@5"):
        a, b = columns["bm25-char-paragraph"][metric], columns["bm25-paragraph"][metric]
        won = sum(x > y for x, y in zip(a, b, strict=True))
        lost = sum(x < y for x, y in zip(a, b, strict=True))
        row = rows[metric]
        assert (row["test"], row["won"], row["lost"]) == ("mcnemar", won, lost)
        assert won + lost > 0 and row["p"] == pytest.approx(binomtest(won, won + lost).pvalue)
        printed = next(line.split() for line in out.split("against the baseline")[1].splitlines()
                       if line.split()[:2] == ["bm25-char-paragraph", metric])
        assert printed[5:8] == [str(won), str(lost), f"{row['p']:.4f}"], printed
    assert rows["mrr@5"]["test"] == rows["ndcg@10"]["test"] == "randomization"
    p_holm = sorted(row["p_holm"] for row in rows.values())
    assert p_holm[0] == pytest.approx(4 * min(row["p"] for row in rows.values()))
    assert "p_holm: Holm over the 4 tests above" in out.splitlines()[-1]


def test_compare_against_a_named_baseline_on_a_small_file(tmp_path, capsys):
    squad = small_squad(tmp_path / "s.json")
    assert main(["compare", "--squad", str(squad), "--docs-per-file", "1", "--baseline",
                 "bm25-char-paragraph", "bm25-paragraph", "bm25-char-paragraph",
                 "bm25-paragraph-lazyllm", "--json", str(tmp_path / "c.json")]) == 0
    report = json.loads((tmp_path / "c.json").read_text())
    assert report["baseline"] == "bm25-char-paragraph"
    assert [(r["pipeline"], r["baseline"]) for r in report["comparisons"][::4]] == [
        ("bm25-paragraph", "bm25-char-paragraph"),
        ("bm25-paragraph-lazyllm", "bm25-char-paragraph")]
    assert len(report["comparisons"]) == 8 and "Holm over the 8 tests" in report["note"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "s.json"]


def test_evaluate_writes_run_and_qrels_that_ir_measures_reads(cmrc_kb, tmp_path, capsys):
    import ir_measures
    from ir_measures import RR, R, nDCG

    paths = {name: tmp_path / name for name in ("r.json", "run.txt", "qrels.txt")}
    assert main(["evaluate", "--squad", str(fetch_cmrc2018()), "--pipeline", "bm25-paragraph",
                 "--json", str(paths["r.json"]), "--run", str(paths["run.txt"]),
                 "--qrels", str(paths["qrels.txt"])]) == 0
    out = capsys.readouterr().out
    result = json.loads(paths["r.json"].read_text())
    assert "rankings" not in result and {"intervals", "per_question"} <= set(result)
    assert f"[{result['intervals']['recall@1'][0]:.4f}, " in out and "ndcg@10" in out
    run = list(ir_measures.read_trec_run(str(paths["run.txt"])))
    qrels = list(ir_measures.read_trec_qrels(str(paths["qrels.txt"])))
    assert len(qrels) == 1000 and len({doc.query_id for doc in run}) == 1000
    assert paths["run.txt"].read_text().split("\n", 1)[0].endswith(" bm25-paragraph")
    scores = ir_measures.calc_aggregate([nDCG @ 10, RR @ 5, R @ 1], qrels, run)
    assert scores[nDCG @ 10] == pytest.approx(result["ndcg@10"], abs=5e-5)
    assert scores[RR @ 5] == pytest.approx(result["mrr@5"], abs=5e-5)
    assert scores[R @ 1] == pytest.approx(result["recall@1"], abs=5e-5)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(paths)


def test_evaluate_run_alone_and_a_bad_unit_id_write_nothing(tmp_path, capsys, monkeypatch):
    squad = small_squad(tmp_path / "s.json")
    assert main(["evaluate", "--squad", str(squad), "--pipeline", "bm25-paragraph",
                 "--docs-per-file", "1", "--run", str(tmp_path / "run.txt")]) == 0
    assert (tmp_path / "run.txt").read_text().startswith("q1 Q0 ")
    (tmp_path / "run.txt").unlink()

    from course_lib.node import DocNode

    def spaced(kb, pipeline, keep_rankings=False):
        return {"rankings": [[DocNode("熊猫主要吃竹子。", uid="a b")]]}

    monkeypatch.setattr("course_lib.lab.measure.evaluation.evaluate", spaced)
    assert main(["evaluate", "--squad", str(squad), "--pipeline", "bm25-paragraph",
                 "--run", str(tmp_path / "run.txt"), "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "document id 'a b' cannot be written to a TREC file" in err
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_data_fetches_and_summarises_trial_and_dev(capsys, monkeypatch):
    from course_lib.lab import cli
    from course_lib.lab.data.datasets import DatasetUnavailableError

    try:
        fetch_cmrc2018(split="dev")
    except DatasetUnavailableError as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"CMRC 2018 dev not available: {error}")
    embedded = []
    monkeypatch.setattr(cli, "_embed_all", lambda squads: embedded.append(sorted(squads)))
    assert main(["data", "--embed"]) == 0
    out = capsys.readouterr().out
    assert "CMRC 2018 trial: " in out and "CMRC 2018 dev: " in out
    assert "256 paragraphs, 1000 questions (2 empty skipped" in out
    assert "848 paragraphs, 3219 questions" in out
    assert "193 unlocatable answers dropped from 174 questions" in out
    assert embedded == [["dev", "trial"]]


@pytest.mark.slow  # 36-57 s in CI: reproduce's whole pipeline on a file of articles
def test_reproduce_on_a_file_of_whole_articles_adds_the_sibling_kept_tier(tmp_path):
    from course_lib.lab.data.datasets import fetch_drcd

    data = json.loads(fetch_drcd().read_text(encoding="utf-8"))["data"]
    articles = ([a for a in data if len(a["paragraphs"]) >= 2][:40]
                + [a for a in data if len(a["paragraphs"]) == 1][:20])
    squad = tmp_path / "articles.json"
    squad.write_text(json.dumps({"version": "t", "data": articles}, ensure_ascii=False),
                     encoding="utf-8")
    out_json = tmp_path / "rep.json"
    assert main(["reproduce", "--squad", str(squad), "--table", "answerability",
                 "--json", str(out_json)]) == 0
    articles_part = json.loads(out_json.read_text())["answerability"]["articles"]
    tiers = [row["tier"] for row in articles_part["rows"]]
    assert tiers[0] == "sibling kept" and "article removed" in tiers
    assert articles_part["half"] is None and articles_part["ambiguous"] == 11


# ==================================================================== bad inputs
# The command line answers a bad argument with exit status 2 and one argparse-style line
# on stderr (``python -m course_lib evaluate: error: argument --json: ...``) before any
# work starts, and leaves no file behind: a parametrised test rather than Cases, since
# main() returns a status instead of raising. Each row counts toward the matrix.

_EVALUATE = ["evaluate", "--squad", "{d}/ok.json", "--pipeline", "bm25-paragraph"]
_COMPARE = ["compare", "--squad", "{d}/ok.json"]
_TWO = ["bm25-paragraph", "bm25-char-paragraph"]
_CLI_ARGUMENT_CASES = [
    ("json-into-missing-folder", [*_EVALUATE, "--json", "{d}/missing/r.json"],
     r"argument --json: the folder .*/missing does not exist; create it first"),
    ("json-names-a-folder", [*_EVALUATE, "--json", "{d}/out"],
     r"argument --json: .*/out is a folder; give a file name, e\.g\. --json .*/out/result\.json"),
    ("json-folder-is-a-file", [*_EVALUATE, "--json", "{d}/plain.txt/r.json"],
     r"argument --json: the folder .*/plain\.txt is not a folder; create it first"),
    ("json-empty-name", [*_EVALUATE, "--json", ""],
     r"argument --json: give a file name, e\.g\. --json result\.json"),
    ("json-names-a-fifo", [*_EVALUATE, "--json", "{d}/pipe"],
     r"argument --json: .*/pipe exists and is not a regular file; give the name of a new"),
    ("squad-missing", ["evaluate", "--squad", "{d}/none.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/none\.json: cannot read the SQuAD file \(No such file or "
     r"directory\); give the path of a SQuAD-format JSON file"),
    ("squad-malformed", ["evaluate", "--squad", "{d}/bad.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/bad\.json: data\[0\]\.paragraphs\[0\] lacks the field 'context'; "
     r"expected a paragraph"),
    ("squad-invalid-json",
     ["evaluate", "--squad", "{d}/broken.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/broken\.json is not valid JSON \(.*line 1 column 11\); expected"),
    ("squad-without-questions",
     ["evaluate", "--squad", "{d}/empty.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/empty\.json has no \(non-empty\) questions to evaluate; give a "
     r"SQuAD file with questions"),
    ("docs-per-file-zero", [*_EVALUATE, "--docs-per-file", "0"],
     r"argument --docs-per-file: must be a whole number ≥ 1, got 0"),
    ("docs-per-file-text", [*_EVALUATE, "--docs-per-file", "ten"],
     r"argument --docs-per-file: must be a whole number ≥ 1, got 'ten'"),
    ("pipeline-misspelt", ["evaluate", "--squad", "{d}/ok.json", "--pipeline", "bm25-paragrap"],
     r"argument --pipeline: unknown pipeline 'bm25-paragrap'; did you mean bm25-paragraph"),
    ("pipeline-unknown", ["evaluate", "--squad", "{d}/ok.json", "--pipeline", "xyz"],
     r"argument --pipeline: unknown pipeline 'xyz'; choose one of .*bm25-paragraph"),
    ("reproduce-json-names-a-folder", ["reproduce", "--json", "{d}/out"],
     r"argument --json: .*/out is a folder; give a file name"),
    ("reproduce-squad-malformed", ["reproduce", "--squad", "{d}/bad.json"],
     r"argument --squad: .*/bad\.json: data\[0\]\.paragraphs\[0\] lacks the field 'context'"),
    # evaluate's TREC outputs: checked like --json, and never two outputs into one file
    ("run-into-missing-folder", [*_EVALUATE, "--run", "{d}/missing/run.txt"],
     r"argument --run: the folder .*/missing does not exist; create it first"),
    ("qrels-names-a-folder", [*_EVALUATE, "--qrels", "{d}/out"],
     r"argument --qrels: .*/out is a folder; give a file name, e\.g\. --qrels .*/out/qrels\.txt"),
    ("run-empty-name", [*_EVALUATE, "--run", " "],
     r"argument --run: give a file name, e\.g\. --run run\.txt"),
    ("qrels-is-the-run-file", [*_EVALUATE, "--run", "{d}/x.txt", "--qrels", "{d}/./x.txt"],
     r"argument --qrels: .*/x\.txt is also the --run file; give each output its own file"),
    ("run-is-the-json-file", [*_EVALUATE, "--json", "{d}/r.json", "--run", "{d}/r.json"],
     r"argument --run: .*/r\.json is also the --json file"),
    # compare: two or more known pipelines, each named once; a baseline among them
    ("compare-pipeline-misspelt", [*_COMPARE, "bm25-paragraph", "bm25-char-paragrap"],
     r"argument PIPELINE: unknown pipeline 'bm25-char-paragrap'; did you mean "
     r"bm25-char-paragraph or .*\? \(`python -m course_lib pipelines` lists them all\)"),
    ("compare-pipeline-unknown", [*_COMPARE, "xyz", "bm25-paragraph"],
     r"argument PIPELINE: unknown pipeline 'xyz'; choose one of .*bm25-paragraph"),
    ("compare-one-pipeline", [*_COMPARE, "bm25-paragraph"],
     r"argument PIPELINE: compare needs at least two pipelines, got only 'bm25-paragraph'; "
     r"name another"),
    ("compare-duplicate-pipeline",
     [*_COMPARE, "bm25-paragraph", "bm25-char-paragraph", "bm25-paragraph"],
     r"argument PIPELINE: 'bm25-paragraph' is named twice; name each pipeline once"),
    ("compare-same-pipeline-twice", [*_COMPARE, "bm25-paragraph", "bm25-paragraph"],
     r"argument PIPELINE: 'bm25-paragraph' is named twice"),
    ("compare-no-pipeline", _COMPARE,
     r"the following arguments are required: PIPELINE"),
    ("compare-baseline-misspelt", [*_COMPARE, *_TWO, "--baseline", "bm25-paragrap"],
     r"argument --baseline: unknown pipeline 'bm25-paragrap'; did you mean bm25-paragraph"),
    ("compare-baseline-not-compared", [*_COMPARE, *_TWO, "--baseline", "bm25-coarse"],
     r"argument --baseline: 'bm25-coarse' is not among the pipelines compared "
     r"\(bm25-paragraph, bm25-char-paragraph\); name it among them too"),
    ("compare-json-into-missing-folder", [*_COMPARE, *_TWO, "--json", "{d}/missing/c.json"],
     r"argument --json: the folder .*/missing does not exist; create it first"),
    ("compare-squad-missing", ["compare", "--squad", "{d}/none.json", *_TWO],
     r"argument --squad: .*/none\.json: cannot read the SQuAD file \(No such file"),
    ("compare-docs-per-file-zero", [*_COMPARE, *_TWO, "--docs-per-file", "0"],
     r"argument --docs-per-file: must be a whole number ≥ 1, got 0"),
]
_CLI_PARAMS = [pytest.param(*case, id=case[0]) for case in _CLI_ARGUMENT_CASES] + [
    pytest.param("json-folder-not-writable", [*_EVALUATE, "--json", "{d}/locked/r.json"],
                 r"argument --json: cannot write into the folder .*/locked \(Permission "
                 r"denied\); choose a folder you can write to", id="json-folder-not-writable",
                 marks=pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")),
]


def _cli_files(tmp_path: Path) -> None:
    """The files the command-line cases name, in ``tmp_path``."""
    import json
    qa = {"id": "q1", "question": "乙？", "answers": [{"text": "乙", "answer_start": 1}]}
    good = {"data": [{"paragraphs": [{"context": "甲乙丙丁。", "qas": [qa]}]}]}
    (tmp_path / "ok.json").write_text(json.dumps(good), encoding="utf-8")
    (tmp_path / "bad.json").write_text('{"data": [{"paragraphs": [{"qas": []}]}]}')
    (tmp_path / "broken.json").write_text('{"data": [')
    (tmp_path / "empty.json").write_text('{"data": []}')
    (tmp_path / "plain.txt").write_text("not a folder")
    (tmp_path / "out").mkdir()
    (tmp_path / "locked").mkdir(mode=0o555)
    os.mkfifo(tmp_path / "pipe")


def _cli_no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any start of the real work fail the test loudly (arguments come first)."""

    def reached(*args: object, **kwargs: object) -> None:
        raise AssertionError("work started before the arguments were checked")

    for name in ("course_lib.lab.cli.build_knowledge_base", "course_lib.lab.cli.fetch_cmrc2018",
                 "course_lib.lab.measure.evaluation.evaluate",
                 "course_lib.lab.measure.reproduce.reproduce"):
        monkeypatch.setattr(name, reached)


@pytest.mark.parametrize(("name", "argv", "match"), _CLI_PARAMS)
def test_cli_bad_argument_exits_2_before_any_work(name: str, argv: list[str], match: str,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _cli_files(tmp_path)
    _cli_no_work(monkeypatch)
    before = sorted(tmp_path.rglob("*"))
    try:
        code = main([arg.format(d=tmp_path) for arg in argv])
    except SystemExit as exit_:  # tolerated: argparse's own way to say the same
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, f"{name}: exit status {code}"
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and err.splitlines()[-1] == errors[0], err  # one line, last
    assert errors[0].startswith(f"python -m course_lib {argv[0]}: error: "), errors[0]
    assert re.search(match, errors[0]), f"{name}: {errors[0]!r} !~ {match!r}"
    assert "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before, "a file was left behind"
