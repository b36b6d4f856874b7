"""TREC run and qrels files (course_lib.lab.measure.trec) that the field's tools read back and
agree with.

On the chapter's trial data: the files ``run_lines``/``qrels_lines`` write, read back with
``ir_measures`` (``trec_eval`` underneath), give per question and on average the numbers
``evaluate`` reports — nDCG@10, AP@10, RR@5, R@1, R@5 against ``ndcg@10``, ``map@10``,
``mrr@5``, ``recall@1``, ``recall@5`` — over ALL questions. A question a pipeline answers
with nothing is absent from the run: the course counts it as 0, and so does ``ir_measures``
(it gives every query of the qrels a value, like ``trec_eval -c``), but ``trec_eval``
itself (``pytrec_eval``, as called here) skips it and averages over the others.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import ir_measures
import pytest
import pytrec_eval
from ir_measures import AP, RR, R, nDCG

from course_lib.lab.data.datasets import KnowledgeBase, Question
from course_lib.lab.measure import trec
from course_lib.lab.measure.evaluation import evaluate
from course_lib.lab.systems.pipelines import build_pipeline
from course_lib.node import DocNode

# ir_measures' measure -> the course's key (per_question column and result mean)
PAIRS = {nDCG @ 10: "ndcg@10", AP @ 10: "map@10", RR @ 5: "mrr@5", R @ 1: "recall@1",
         R @ 5: "recall@5"}


@pytest.fixture(scope="module")
def bm25_result(cmrc_kb: KnowledgeBase) -> dict[str, Any]:
    return evaluate(cmrc_kb, "bm25-paragraph", keep_rankings=True)


def write_and_read_back(kb: KnowledgeBase, result: dict[str, Any], folder: Path
                        ) -> tuple[list[Any], list[Any]]:
    run_path = trec.write_lines(trec.run_lines(kb.questions, result["rankings"],
                                               tag=result["pipeline"]), folder / "run.txt")
    qrels_path = trec.write_lines(trec.qrels_lines(kb.questions), folder / "qrels.txt")
    return (list(ir_measures.read_trec_run(str(run_path))),
            list(ir_measures.read_trec_qrels(str(qrels_path))))


def per_query(qrels: list[Any], run: list[Any]) -> dict[str, dict[str, float]]:
    """``{course key: {query id: value}}`` as ir_measures computes them."""
    found: dict[str, dict[str, float]] = defaultdict(dict)
    for metric in ir_measures.iter_calc(list(PAIRS), qrels, run):
        found[PAIRS[metric.measure]][metric.query_id] = float(metric.value)
    return found


def assert_course_equals_trec_eval(kb: KnowledgeBase, result: dict[str, Any], folder: Path
                                   ) -> set[str]:
    """Per question and on average; returns the ids of questions absent from the run."""
    run, qrels = write_and_read_back(kb, result, folder)
    assert len(qrels) == len(kb.questions)
    found = per_query(qrels, run)
    in_run = {doc.query_id for doc in run}
    columns = result["per_question"]
    assert columns["id"] == [q.id for q in kb.questions]
    for key in PAIRS.values():
        # ir_measures fills queries absent from the run with 0; the .get says so again
        expected = [found[key].get(qid, 0.0) for qid in columns["id"]]
        assert all(found[key][qid] == 0 for qid in set(columns["id"]) - in_run)
        assert columns[key] == pytest.approx(expected, abs=1e-12), key
        assert result[key] == pytest.approx(sum(expected) / len(expected), abs=5e-5), key
    return {qid for qid in columns["id"] if qid not in in_run}


def test_trec_files_read_back_give_the_course_numbers(cmrc_kb, bm25_result, tmp_path) -> None:
    missing = assert_course_equals_trec_eval(cmrc_kb, bm25_result, tmp_path)
    assert missing == set()
    assert bm25_result["recall@1"] < bm25_result["recall@5"] < 1  # not a degenerate run
    assert 0 < bm25_result["ndcg@10"] < 1


def test_questions_answered_with_nothing_count_as_zero(cmrc_kb, tmp_path) -> None:
    retrieve = build_pipeline("bm25-paragraph", cmrc_kb).retrieve
    silent = {q.question for q in cmrc_kb.questions[::7]}

    def sometimes_nothing(question: str) -> list[DocNode]:
        return [] if question in silent else retrieve(question)

    result = evaluate(cmrc_kb, sometimes_nothing, keep_rankings=True)
    missing = assert_course_equals_trec_eval(cmrc_kb, result, tmp_path)
    assert len(missing) >= len(cmrc_kb.questions) // 7
    assert all(result["per_question"]["gold_rank"][i] is None
               for i, q in enumerate(cmrc_kb.questions) if q.id in missing)
    # trec_eval itself scores only the queries in the run: its average is flattering
    run, qrels = write_and_read_back(cmrc_kb, result, tmp_path)
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q.query_id: {q.doc_id: q.relevance} for q in qrels}, {"ndcg_cut.10"})
    ranked: dict[str, dict[str, float]] = defaultdict(dict)
    for doc in run:
        ranked[doc.query_id][doc.doc_id] = doc.score
    scored = evaluator.evaluate(ranked)
    assert set(scored) == {doc.query_id for doc in run} and not missing & set(scored)
    skipping = sum(v["ndcg_cut_10"] for v in scored.values()) / len(scored)
    assert skipping > result["ndcg@10"] + 0.1


def test_scores_strictly_decrease_and_ranks_count_up(cmrc_kb, bm25_result) -> None:
    lines = trec.run_lines(cmrc_kb.questions, bm25_result["rankings"], tag="bm25-paragraph")
    by_question: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for line in lines:
        qid, q0, _docid, rank, score, tag = line.split(" ")
        assert (q0, tag) == ("Q0", "bm25-paragraph")
        by_question[qid].append((int(rank), float(score)))
    assert len(by_question) == len(cmrc_kb.questions)
    for rows in by_question.values():
        assert [rank for rank, _ in rows] == list(range(1, len(rows) + 1))
        scores = [score for _, score in rows]
        assert all(a > b for a, b in zip(scores, scores[1:], strict=False)), scores


def test_a_chunk_run_lists_each_document_once(cmrc_kb, tmp_path) -> None:
    result = evaluate(cmrc_kb, "bm25-coarse", keep_rankings=True)
    lines = trec.run_lines(cmrc_kb.questions, result["rankings"])
    pairs = [tuple(line.split(" ")[0:3:2]) for line in lines]
    assert len(pairs) == len(set(pairs))
    assert_course_equals_trec_eval(cmrc_kb, result, tmp_path)


GOLD = "长城东起山海关，西至嘉峪关，全长两万多里，是古代的军事防御工程。"
QUESTION = Question("q1", "长城东起哪里？", ["山海关"], [4], "p7", GOLD)


def test_two_units_hitting_the_same_gold_list_it_once() -> None:
    first, second = DocNode(GOLD[:-3], uid="doc/chunk[0]"), DocNode(GOLD[3:], uid="doc/chunk[1]")
    other = DocNode("熊猫主要吃竹子。", uid="doc/chunk[2]")
    lines = trec.run_lines([QUESTION], [[other, first, second, other]], tag="t")
    assert lines == ["q1 Q0 doc/chunk[2] 1 2 t", "q1 Q0 p7 2 1 t"]
    assert trec.trec_measures([QUESTION], [[other, first, second]])["map@10"] == [0.5]


@pytest.mark.parametrize(("call", "match"), [
    (lambda: trec.run_lines([QUESTION], [[DocNode("熊猫吃竹子。", uid="doc 1/p[0]")]]),
     r"question 'q1': document id 'doc 1/p\[0\]' cannot be written to a TREC file: it must "
     r"be non-empty and hold no spaces"),
    (lambda: trec.run_lines([QUESTION], [[DocNode(GOLD, uid="d")]], tag="my run"),
     r"the run tag 'my run' cannot be written to a TREC file"),
    (lambda: trec.qrels_lines([Question("q 1", "?", ["a"], [0], "p7", "a")]),
     r"question id 'q 1' cannot be written to a TREC file"),
    (lambda: trec.run_lines([QUESTION], []), r"1 questions but 0 rankings"),
], ids=["uid-with-space", "tag-with-space", "question-id-with-space", "lengths"])
def test_what_a_trec_file_cannot_hold_is_refused(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()
