"""The field's formats and metrics: TREC run and qrels files, nDCG@10 and MAP@10.

Retrieval papers (BEIR, MTEB) report nDCG@10, and the standard tools — ``trec_eval``,
``ir_measures``, ``ranx`` — read two text files:

* a **qrels** file, one judged document per line: ``qid 0 docid relevance``;
* a **run** file, one retrieved document per line: ``qid Q0 docid rank score tag``.

Here relevance is binary: a question's only relevant document is its gold paragraph
(its ``paragraph_id``). A retrieved unit that *hits* the gold paragraph by the
chapter's rule (:func:`course_lib.metrics.is_hit`, the rule recall@k counts) is written
under the gold paragraph's id, so the standard tools count exactly the hits the course
counts; any other unit is written under its own ``uid``. A second unit hitting the same
gold paragraph (two overlapping chunks) is left out: one document cannot be retrieved
twice. The score column is derived from the rank (``len(ranking) − rank + 1``), because
``trec_eval`` orders a run by score and breaks ties by document id — it would otherwise
re-order nodes the pipeline tied.

nDCG@10 and MAP@10 are computed by ``trec_eval`` itself (``pytrec_eval``, through
``ir_measures``): the well-kept implementation, not ours. With one relevant document,
``nDCG@10 = 1 / log2(1 + rank)`` and ``AP@10 = 1 / rank`` (equal to MRR@10) when the gold
paragraph is ranked within 10, else 0. Pipelines that return 5 nodes are scored on those 5.

A question for which a pipeline returns nothing is absent from its run. Plain
``trec_eval`` (and ``pytrec_eval``) then averages over the other questions only, which
flatters the run; ``ir_measures`` and ``trec_eval -c`` count it as 0, as recall@k does,
and so does :func:`trec_measures`.

>>> from course_lib.lab.data.datasets import Question
>>> from course_lib.node import DocNode
>>> q = Question("q1", "长城东起哪里？", ["山海关"], [5], "p7", "长城东起山海关。")
>>> ranking = [DocNode("北京是首都。", uid="doc/p1"), DocNode("长城东起山海关。", uid="doc/p7")]
>>> run_lines([q], [ranking], tag="demo")
['q1 Q0 doc/p1 1 2 demo', 'q1 Q0 p7 2 1 demo']
>>> {k: round(v[0], 4) for k, v in trec_measures([q], [ranking]).items()}
{'ndcg@10': 0.6309, 'map@10': 0.5}
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ...metrics import is_hit
from ...node import DocNode
from ...store.safe_folder import write_text_atomically
from ..data.datasets import Question

MEASURES = {"ndcg@10": "nDCG@10", "map@10": "AP@10"}  # our key -> ir_measures' name
_NO_SPACE = re.compile(r"\s")


def _field(value: str, what: str) -> str:
    if not value or _NO_SPACE.search(value):
        raise ValueError(f"{what} {value!r} cannot be written to a TREC file: it must be "
                         "non-empty and hold no spaces, tabs or newlines")
    return value


def judged_ranking(question: Question, ranking: Sequence[DocNode],
                   hits: Sequence[bool] | None = None) -> list[str]:
    """The document ids a TREC run lists for ``ranking``, best first (see the module);
    ``hits``: whether each node hits the gold paragraph, if already known."""
    ids: list[str] = []
    for rank, node in enumerate(ranking, start=1):
        if (hits[rank - 1] if hits is not None else is_hit(node.text, question.paragraph)):
            docid = question.paragraph_id
        else:
            docid = node.uid or f"{question.id}-unit{rank}"
        if docid not in ids:
            ids.append(_field(docid, f"question {question.id!r}: document id"))
    return ids


def run_lines(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
              tag: str = "course_lib", hits: Sequence[Sequence[bool]] | None = None
              ) -> list[str]:
    """``qid Q0 docid rank score tag`` lines of a TREC run, question by question."""
    if len(questions) != len(rankings):
        raise ValueError(f"{len(questions)} questions but {len(rankings)} rankings")
    _field(tag, "the run tag")
    lines = []
    for i, (question, ranking) in enumerate(zip(questions, rankings, strict=True)):
        ids = judged_ranking(question, ranking, None if hits is None else hits[i])
        qid = _field(question.id, "question id")
        lines += [f"{qid} Q0 {docid} {rank} {len(ids) - rank + 1} {tag}"
                  for rank, docid in enumerate(ids, start=1)]
    return lines


def qrels_lines(questions: Sequence[Question]) -> list[str]:
    """``qid 0 docid 1`` lines: each question's gold paragraph, relevance 1."""
    return [f"{_field(q.id, 'question id')} 0 "
            f"{_field(q.paragraph_id, f'question {q.id!r}: paragraph id')} 1" for q in questions]


def write_lines(lines: Sequence[str], target: str | os.PathLike[str]) -> Path:
    """Write ``lines`` to ``target`` atomically (whole, or not at all)."""
    return write_text_atomically(target, "".join(line + "\n" for line in lines))


def trec_measures(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
                  hits: Sequence[Sequence[bool]] | None = None) -> dict[str, list[float]]:
    """Per question, nDCG@10 and MAP@10 as ``trec_eval`` computes them (0 for a question
    with nothing retrieved); keys ``ndcg@10`` and ``map@10``, in question order.
    ``hits``: per question, whether each node hits its gold paragraph, if known."""
    import ir_measures

    if len(questions) != len(rankings):
        raise ValueError(f"{len(questions)} questions but {len(rankings)} rankings")
    qrels = [ir_measures.Qrel(q.id, q.paragraph_id, 1) for q in questions]
    run = [ir_measures.ScoredDoc(qid, docid, float(score))
           for qid, _, docid, _, score, _ in (line.split() for line in
                                               run_lines(questions, rankings, hits=hits))]
    measures = [ir_measures.parse_measure(name) for name in MEASURES.values()]
    found: dict[tuple[str, str], float] = {}
    for metric in ir_measures.iter_calc(measures, qrels, run):
        found[(str(metric.measure), metric.query_id)] = float(metric.value)
    return {key: [found.get((name, q.id), 0.0) for q in questions]
            for key, name in MEASURES.items()}
