"""Run a retrieval pipeline over labelled questions and score it.

A *pipeline* is anything that maps a question to ranked nodes. For each question
we record, per rank, whether the unit hits the gold paragraph (edit similarity > 0.5)
and whether it contains the gold answer span, then average over questions.

>>> from course_lib.lab.data.datasets import load_cmrc2018_kb          # doctest: +SKIP
>>> result = evaluate(load_cmrc2018_kb(), "bm25-paragraph")  # doctest: +SKIP
>>> result["recall@1"] >= 0.95                               # doctest: +SKIP
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ...embeddings import expected_queries
from ...metrics import context_relevance, context_sentences, is_hit, mrr_at_k, recall_at_k
from ...node import DocNode
from ...ranking import passes, round_score
from ..data.datasets import KnowledgeBase, Question
from ..systems.pipelines import PIPELINES, build_pipeline
from .significance import SEED, interval
from .trec import trec_measures

KS = (1, 3, 5)


def answer_span_in(unit: DocNode, question: Question, file_text: str) -> bool:
    """Does ``unit`` (a verbatim piece of its file) contain the gold answer span?"""
    if unit.metadata.get("file_name") != question.file_name:
        return False
    start = file_text.find(unit.text)
    if start < 0:
        return False
    end = start + len(unit.text)
    return any(start <= question.paragraph_offset + s and
               question.paragraph_offset + s + len(answer) <= end
               for s, answer in zip(question.answer_starts, question.answers, strict=True))


def per_question(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
                 files: dict[str, str] | None = None, ks: Sequence[int] = KS,
                 trec: bool = False, hits: Sequence[Sequence[bool]] | None = None
                 ) -> dict[str, list[Any]]:
    """Every metric for every question, as columns in question order — what a *paired*
    comparison of two runs on the same questions needs (:mod:`course_lib.lab.measure.significance`).

    Columns: ``id``, ``gold_rank`` (1-based rank of the first unit that hits the gold
    paragraph, ``None`` when none does), then ``recall@k``, ``mrr@k``,
    ``context_relevance@k`` (and ``span_recall@k`` given ``files``) for each k, and with
    ``trec=True`` ``ndcg@10`` and ``map@10`` from ``trec_eval`` (:mod:`.trec`).
    ``hits``: per question, whether each node hits the gold paragraph, if already known.

    >>> q = Question("1", "长城东起哪里？", ["山海关"], [5], "p1", "长城东起山海关。")
    >>> ranking = [DocNode("北京是首都。"), DocNode("长城东起山海关。")]
    >>> columns = per_question([q], [ranking], ks=(1, 3))
    >>> columns["gold_rank"], columns["recall@1"], columns["mrr@3"]
    ([2], [0.0], [0.5])
    """
    if len(questions) != len(rankings):
        raise ValueError(f"{len(questions)} questions but {len(rankings)} rankings")
    if not questions:
        raise ValueError("no questions to score")
    columns: dict[str, list[Any]] = {"id": [q.id for q in questions], "gold_rank": []}
    for i, (question, ranking) in enumerate(zip(questions, rankings, strict=True)):
        hit = (list(hits[i][:len(ranking)]) if hits is not None else
               [is_hit(unit.text, question.paragraph) for unit in ranking])
        columns["gold_rank"].append(hit.index(True) + 1 if any(hit) else None)
        spans = ([answer_span_in(u, question, files[question.file_name]) for u in ranking]
                 if files is not None else None)
        texts = [unit.text for unit in ranking]
        for k in ks:
            row = {f"recall@{k}": recall_at_k(hit, k), f"mrr@{k}": mrr_at_k(hit, k),
                   f"context_relevance@{k}": context_relevance(texts[:k], [question.paragraph])}
            if spans is not None:
                row[f"span_recall@{k}"] = recall_at_k(spans, k)
            for key, value in row.items():
                columns.setdefault(key, []).append(value)
    if trec:
        columns.update(trec_measures(questions, rankings, hits))
    return columns


def means(columns: dict[str, list[Any]]) -> dict[str, float]:
    """The mean of every metric column of :func:`per_question` (4 decimals)."""
    return {key: round(sum(values) / len(values), 4) for key, values in columns.items()
            if key not in ("id", "gold_rank")}


def score_rankings(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
                   files: dict[str, str] | None = None, ks: Sequence[int] = KS) -> dict[str, float]:
    """Average recall@k, MRR@k, context relevance@k (and span recall@k given ``files``)."""
    return means(per_question(questions, rankings, files, ks))


def intervals(columns: dict[str, list[Any]], seed: int = SEED) -> dict[str, list[float]]:
    """A 95 % interval for the mean of every metric column: exact (Clopper–Pearson) for
    hit/miss columns such as recall@k, a seeded bootstrap over questions for the others
    (MRR@k, context relevance, nDCG) — :func:`course_lib.lab.measure.significance.interval`."""
    return {key: [round(x, 4) for x in interval(values, seed=seed)]
            for key, values in columns.items() if key not in ("id", "gold_rank")}


def evaluate(kb: KnowledgeBase, pipeline: str | Callable[[str], list[DocNode]],
             ks: Sequence[int] = KS, span_recall: bool | None = None,
             keep_rankings: bool = False, base: dict[str, Any] | None = None,
             with_intervals: bool = True) -> dict[str, Any]:
    """Score ``pipeline`` (a registered name or a callable) on ``kb``'s questions.

    The returned dict holds ``pipeline``, ``questions``, ``skipped``, ``recall@k``,
    ``mrr@k``, ``context_relevance@k`` for each k, ``span_recall@k`` for chunk
    pipelines (or when ``span_recall=True``), ``ndcg@10`` and ``map@10`` (by
    ``trec_eval``, :mod:`course_lib.lab.measure.trec`), ``intervals`` (a 95 % interval per metric,
    :func:`intervals`), ``per_question`` (:func:`per_question`'s columns, for paired
    comparisons), ``seconds`` (index build included) and ``ms_per_query`` (retrieval
    only, after the build). ``keep_rankings=True`` adds the ranked nodes under
    ``rankings`` (what a TREC run file lists: :func:`course_lib.lab.measure.trec.run_lines`).

    ``base``: for a pipeline registered as a cut-off of another (``cut_off_of``), that
    other pipeline's result on the same ``kb``, kept with ``keep_rankings=True``; its
    rankings are cut instead of retrieving (and reranking) again — the same nodes, and
    ``ms_per_query`` is the base's, since the cut-off itself costs nothing.
    ``with_intervals=False`` leaves ``intervals`` out (the bootstraps take about a third
    of a second; :func:`intervals` computes them later from ``per_question``).
    """
    if not kb.paragraphs or not kb.questions:
        raise ValueError(f"kb: the knowledge base holds {len(kb.paragraphs)} paragraphs and "
                         f"{len(kb.questions)} questions: nothing to evaluate (a SQuAD file "
                         "whose \"data\" is empty gives this); give one with both")
    started = time.perf_counter()
    name = pipeline if isinstance(pipeline, str) else getattr(pipeline, "__name__", "custom")
    spec = PIPELINES.get(pipeline) if isinstance(pipeline, str) else None
    if base is not None:
        if spec is None or spec.cut_off_of is None:
            raise ValueError(f"base: {name!r} is not registered as a cut-off of another "
                             "pipeline (cut_off_of); evaluate it without base")
        if base.get("pipeline") != spec.cut_off_of[0] or "rankings" not in base:
            raise ValueError(f"base: give the result of {spec.cut_off_of[0]!r} on the same "
                             f"knowledge base, evaluated with keep_rankings=True")
        cut = spec.cut_off_of[1]
        rankings = [[node for node in ranking if passes(node.score, cut)]
                    for ranking in base["rankings"]]
        chunked, per_query_ms = spec.chunked, base["ms_per_query"]
    else:
        if isinstance(pipeline, str):
            built = build_pipeline(pipeline, kb)
            retrieve, chunked = built.retrieve, built.chunked
        else:
            retrieve, chunked = pipeline, False
        built = time.perf_counter()
        rankings = [ranking[: max(*ks, 10)] for ranking in retrieve_all(kb, retrieve)]
        per_query_ms = (time.perf_counter() - built) * 1000 / max(len(kb.questions), 1)
    if span_recall is not None:
        chunked = span_recall
    hits = [[is_hit(n.text, q.paragraph) for n in ranking]  # once, for both
            for q, ranking in zip(kb.questions, rankings, strict=True)]
    columns = per_question(kb.questions, [r[: max(ks)] for r in rankings],
                           kb.files if chunked else None, ks, hits=hits)
    columns.update(trec_measures(kb.questions, rankings, hits))
    result = {"pipeline": name, "questions": len(kb.questions), "skipped": len(kb.skipped),
              **means(columns), **({"intervals": intervals(columns)} if with_intervals else {}),
              "per_question": columns,
              "seconds": round(time.perf_counter() - started, 2),
              "ms_per_query": round(per_query_ms, 2)}
    if keep_rankings:
        result["rankings"] = rankings
    return result


def format_result(result: dict[str, Any], ks: Sequence[int] = KS, timing: bool = True) -> str:
    """A small text table of one evaluation result (``timing=False`` leaves out seconds)."""
    seconds = (f", {result['seconds']} s, {result['ms_per_query']} ms per query"
               if timing else "")
    lines = [f"pipeline {result['pipeline']}: {result['questions']} questions "
             f"({result['skipped']} empty skipped){seconds}",
             f"{'metric':<20}" + "".join(f"{'top ' + str(k):>9}" for k in ks)]
    for metric in ("recall", "span_recall", "mrr", "context_relevance"):
        if f"{metric}@{ks[0]}" in result:
            lines.append(f"{metric:<20}" + "".join(f"{result[f'{metric}@{k}']:>9.4f}" for k in ks))
    return "\n".join(lines)


def retrieve_all(kb: KnowledgeBase, retrieve: Callable[[str], list[DocNode]]
                 ) -> list[list[DocNode]]:
    """``retrieve(question)`` for every question of ``kb``, in order — the rankings that
    :func:`score_rankings` and :func:`cut_off_sweep` read. A dense model embeds all the
    questions in one batch (much faster than one question at a time)."""
    with expected_queries([q.question for q in kb.questions]):
        return [list(retrieve(q.question)) for q in kb.questions]


def cut_off_sweep(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
                  thresholds: Sequence[float], k: int = 5) -> list[dict[str, float]]:
    """Recall@k and context relevance@k if only scores strictly above each threshold were kept.

    ``rankings`` are scored, best-first results retrieved once *without* a cut-off;
    applying the cut-off afterwards gives exactly what a retriever with that cut-off
    returns, so a whole sweep costs one retrieval per question. Each row holds
    ``cut_off``, ``recall@k``, ``context_relevance@k`` (the numbers :func:`score_rankings`
    gives for the kept nodes), ``mean_kept`` (nodes kept per question) and ``empty``
    (the share of questions left with nothing — their context relevance counts as 0).

    Whether each node hits and how many of its sentences are the gold paragraph's is
    worked out once; each threshold then only counts. The per-question numbers behind
    each row are :func:`cut_off_columns`'s.
    """
    units = _cut_off_units(questions, rankings, k)
    sweep = []
    for threshold in thresholds:
        columns = _kept_columns(units, threshold, k)
        n = len(units)
        sweep.append({"cut_off": threshold,
                      f"recall@{k}": round(sum(columns[f"recall@{k}"]) / n, 4),
                      f"context_relevance@{k}": round(sum(columns[f"context_relevance@{k}"]) / n,
                                                      4),
                      "mean_kept": round(sum(columns["kept"]) / n, 3),
                      "empty": round(sum(not kept for kept in columns["kept"]) / n, 4)})
    return sweep


def gold_rank(nodes: Sequence[DocNode], paragraph: str) -> int | None:
    """1-based rank of the gold ``paragraph`` among ``nodes`` (``None`` if absent).

    >>> gold_rank([DocNode("a"), DocNode("b")], "b")
    2
    """
    return next((rank for rank, node in enumerate(nodes, start=1) if node.text == paragraph), None)


def hit_ranks(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]]
              ) -> list[int | None]:
    """Per question, the 1-based rank of the first node that *hits* its gold paragraph
    (the rule recall@k counts, :func:`course_lib.metrics.is_hit`); ``None`` if none does.

    >>> q = Question("1", "长城东起哪里？", ["山海关"], [5], "p1", "长城东起山海关。")
    >>> hit_ranks([q, q], [[DocNode("北京是首都。"), DocNode("长城东起山海关。")], []])
    [2, None]
    """
    if len(questions) != len(rankings):
        raise ValueError(f"{len(questions)} questions but {len(rankings)} rankings")
    return [next((rank for rank, node in enumerate(ranking, start=1)
                  if is_hit(node.text, question.paragraph)), None)
            for question, ranking in zip(questions, rankings, strict=True)]


def head_to_head(questions: Sequence[Question],
                 rankings: dict[str, Sequence[Sequence[DocNode]]], k: int = 1
                 ) -> dict[str, list[int]]:
    """Which of two rankings finds each question's gold paragraph in its top ``k``.

    ``rankings`` maps two names (say "BM25" and "e5") to one ranking per question. The
    result maps ``"both"``, ``"only <first>"``, ``"only <second>"`` and ``"neither"`` to
    the indices of the questions in that case; the four lists share out all questions,
    so ``len(both) + len(only first)`` over the number of questions is the first
    ranking's recall@k.

    >>> q = Question("1", "长城东起哪里？", ["山海关"], [5], "p1", "长城东起山海关。")
    >>> gold, other = DocNode("长城东起山海关。"), DocNode("北京是首都。")
    >>> head_to_head([q, q, q], {"a": [[gold], [gold], [other]], "b": [[gold], [other], [other]]})
    {'both': [0], 'only a': [1], 'only b': [], 'neither': [2]}
    """
    if len(rankings) != 2:
        raise ValueError(f"head_to_head compares two rankings, got {len(rankings)}")
    (first, first_rankings), (second, second_rankings) = rankings.items()
    if first == second:
        raise ValueError("give the two rankings different names")
    cases: dict[str, list[int]] = {"both": [], f"only {first}": [], f"only {second}": [],
                                   "neither": []}
    ranks = zip(hit_ranks(questions, first_rankings), hit_ranks(questions, second_rankings),
                strict=True)
    for index, (a, b) in enumerate(ranks):
        a_found, b_found = a is not None and a <= k, b is not None and b <= k
        case = ("both" if a_found and b_found else f"only {first}" if a_found
                else f"only {second}" if b_found else "neither")
        cases[case].append(index)
    return cases


def scores_by_hit(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
                  k: int = 5) -> dict[str, list[float]]:
    """The scores of the top ``k`` nodes, split into those that hit the question's gold
    paragraph and all the others — what a score cut-off has to tell apart.

    >>> q = Question("1", "长城东起哪里？", ["山海关"], [5], "p1", "长城东起山海关。")
    >>> ranking = [DocNode("长城东起山海关。", score=0.9), DocNode("北京是首都。", score=0.8)]
    >>> scores_by_hit([q], [ranking])
    {'gold paragraph': [0.9], 'other paragraphs': [0.8]}
    """
    if len(questions) != len(rankings):
        raise ValueError(f"{len(questions)} questions but {len(rankings)} rankings")
    split: dict[str, list[float]] = {"gold paragraph": [], "other paragraphs": []}
    for question, ranking in zip(questions, rankings, strict=True):
        for node in ranking[:k]:
            if node.score is not None:
                key = "gold paragraph" if is_hit(node.text, question.paragraph) else \
                    "other paragraphs"
                split[key].append(node.score)
    return split


# ---------------------------------------------------------------- a cut-off, per question
def _cut_off_units(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
                   k: int) -> list[list[tuple[float | None, bool, int, int]]]:
    """Per question, per node of its top ``k``: (score rounded, hits?, gold sentences,
    sentences) — what any cut-off needs, worked out once."""
    if len(questions) != len(rankings):
        raise ValueError(f"{len(questions)} questions but {len(rankings)} rankings")
    if not questions:
        raise ValueError("no questions to score")
    units = []
    for question, ranking in zip(questions, rankings, strict=True):
        gold = set(context_sentences([question.paragraph]))
        rows = []
        for node in ranking[:k]:
            sentences = context_sentences([node.text])
            score = None if node.score is None else round_score(node.score)
            rows.append((score, is_hit(node.text, question.paragraph),
                         sum(s in gold for s in sentences), len(sentences)))
        units.append(rows)
    return units


def _kept_columns(units: list[list[tuple[float | None, bool, int, int]]],
                  threshold: float | None, k: int) -> dict[str, list[float]]:
    """The per-question columns of :func:`cut_off_columns` from :func:`_cut_off_units`."""
    columns: dict[str, list[float]] = {f"recall@{k}": [], f"context_relevance@{k}": [],
                                       "kept": []}
    cut = None if threshold is None else round_score(threshold)
    for rows in units:  # kept: what ranking.passes keeps (scores compared rounded)
        kept = [row for row in rows if cut is None or (row[0] is not None and row[0] > cut)]
        sentences = sum(row[3] for row in kept)
        columns[f"recall@{k}"].append(1.0 if any(row[1] for row in kept) else 0.0)
        columns[f"context_relevance@{k}"].append(
            sum(row[2] for row in kept) / sentences if sentences else 0.0)
        columns["kept"].append(len(kept))
    return columns


def cut_off_columns(questions: Sequence[Question], rankings: Sequence[Sequence[DocNode]],
                    threshold: float | None, k: int = 5) -> dict[str, list[float]]:
    """Per question, what keeping only scores strictly above ``threshold`` leaves:
    ``recall@k`` (1.0 or 0.0), ``context_relevance@k`` (0.0 for a question left with
    nothing) and ``kept`` (nodes kept), in question order.

    :func:`cut_off_sweep` gives only the means over questions; these columns are what an
    interval (:func:`course_lib.lab.measure.significance.interval`) or a paired comparison of two
    cut-offs on the same questions (:func:`course_lib.lab.measure.significance.compare_pair`) needs.
    Their means are exactly the sweep's row for ``threshold``.

    >>> q = Question("1", "长城东起哪里？", ["山海关"], [5], "p1", "长城东起山海关。")
    >>> ranking = [DocNode("长城东起山海关。", score=0.9), DocNode("北京是首都。", score=0.8)]
    >>> cut_off_columns([q, q], [ranking, ranking[1:]], 0.85)
    {'recall@5': [1.0, 0.0], 'context_relevance@5': [1.0, 0.0], 'kept': [1, 0]}
    """
    return _kept_columns(_cut_off_units(questions, rankings, k), threshold, k)


def lexical_rivals(questions: Sequence[Question], paragraphs: Sequence[str],
                   tokens: Callable[[str], list[str]]) -> list[bool | None]:
    """For each of ``questions``: does some *other* of the ``paragraphs`` hold at least as
    many of the question's Chinese words (cut by ``tokens``) as the gold paragraph does?
    Those are the questions word overlap alone cannot single out. ``None`` for a question
    with no Chinese word. It counts words only, not how rare they are (BM25 weighs that too).

    >>> from course_lib.text_tokens import chinese_tokens
    >>> paragraphs = ["长城东起山海关。", "北京是中国的首都。", "长城经过北京。"]
    >>> questions = [Question("1", "长城东起哪里？", ["山海关"], [5], "p1", paragraphs[0]),
    ...              Question("2", "长城经过哪座城市？", ["北京"], [4], "p3", paragraphs[2])]
    >>> lexical_rivals(questions, paragraphs, chinese_tokens)
    [False, False]
    >>> lexical_rivals(questions[:1], paragraphs[1:] + ["长城东起何处？"], chinese_tokens)
    [True]
    """
    vocabularies = {paragraph: set(tokens(paragraph)) for paragraph in paragraphs}
    flags: list[bool | None] = []
    for question in questions:
        words = [w for w in tokens(question.question) if "\u4e00" <= w[0] <= "\u9fff"]
        if not words:
            flags.append(None)
            continue
        gold_vocabulary = vocabularies.get(question.paragraph) or set(tokens(question.paragraph))
        gold = sum(w in gold_vocabulary for w in words)
        flags.append(any(sum(w in vocabulary for w in words) >= gold
                         for paragraph, vocabulary in vocabularies.items()
                         if paragraph != question.paragraph))
    return flags
