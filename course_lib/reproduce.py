"""Reproduce the reference chapter's recall tables, our numbers beside theirs.

The chapter's numbers (LazyLLM RAG course, ch. 7, CMRC 2018 trial) are typed in
below from its tables; ours are computed now, on the real data. A row whose setting
the chapter did not have shows "–" for the chapter. One table is not the chapter's at all:
``answerability`` (notebook 12) — can the system tell that the knowledge base lacks the
answer? — held-out AUROC and decline shares, from :mod:`course_lib.answerability`.

>>> sorted(TABLES)[:3]
['chunks_vs_paragraphs', 'cut_off', 'query_rewriting']
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .answerability import answerability_possible, evaluate_answerability
from .datasets import KnowledgeBase
from .evaluation import KS, evaluate
from .pipelines import COSINE_CUT_OFF, RERANK_CUT_OFF, USE_COSINE_CUT_OFF

Triple = tuple[float, float, float]


@dataclass
class Row:
    label: str
    pipeline: str
    chapter: dict[str, Triple] = field(default_factory=dict)  # metric -> top 1/3/5


@dataclass
class Table:
    title: str
    metrics: tuple[str, ...]
    rows: list[Row]


_CHUNKS = {"recall": (0.43, 0.47, 0.48), "context_relevance": (0.50, 0.20, 0.12)}
_PARAGRAPH_BM25 = {"recall": (0.94, 0.97, 0.98), "context_relevance": (0.86, 0.30, 0.18)}
_RR = ("recall", "context_relevance")

TABLES: dict[str, Table] = {
    "chunks_vs_paragraphs": Table(
        "Fixed chunks vs paragraphs (BM25, jieba words)", _RR, [
            Row("fixed 1024 chunks (characters)", "bm25-coarse", _CHUNKS),
            Row("fixed 1024 chunks (~GPT-2 tokens)", "bm25-coarse-gpt2", _CHUNKS),
            Row("paragraph group, LazyLLM's tokens", "bm25-paragraph-lazyllm", _PARAGRAPH_BM25),
            Row("paragraph group, our tokens", "bm25-paragraph", _PARAGRAPH_BM25),
        ]),
    "summaries": Table(
        "Paragraphs retrieved through their summaries (chapter: LLM summaries; ours: offline "
        "TextRank)", _RR, [
            Row("summary → paragraph, BM25", "bm25-summary-to-paragraph",
                {"recall": (0.83, 0.89, 0.90), "context_relevance": (0.76, 0.29, 0.17)}),
            Row("summary → paragraph, cosine (e5)", "cosine-summary-to-paragraph",
                {"recall": (0.89, 0.93, 0.94)}),
            Row("summary → paragraph, cosine (USE)", "cosine-summary-to-paragraph-use"),
        ]),
    "query_rewriting": Table(
        "Query rewriting on the paragraph group (BM25; offline rewriter)", ("recall",), [
            Row("off", "bm25-paragraph"),
            Row("multi-query: 3 phrasings, RRF", "bm25-paragraph-multiquery"),
            Row("expansion with the top hit's keywords", "bm25-paragraph-expansion"),
        ]),
    "similarity": Table(
        "Similarity on the paragraph group (chapter's cosine: bge-large-zh-v1.5; ours: "
        "multilingual-e5-small and USE)", _RR, [
            Row("BM25, jieba words", "bm25-paragraph", _PARAGRAPH_BM25),
            Row("BM25, characters", "bm25-char-paragraph"),
            Row("cosine, e5 (retrieval model)", "cosine-paragraph",
                {"recall": (0.92, 0.95, 0.97), "context_relevance": (0.84, 0.29, 0.18)}),
            Row("cosine, USE (sentence encoder)", "cosine-paragraph-use"),
            Row("hybrid: words + characters + cosine, RRF", "hybrid-rrf"),
        ]),
    "cut_off": Table(
        "Similarity cut-off: fewer, surer paragraphs (chapter: cosine > 0.4)", _RR, [
            Row(f"cosine > {COSINE_CUT_OFF} (e5 scale)", "cosine-paragraph-cutoff",
                {"recall": (0.86, 0.88, 0.88), "context_relevance": (0.87, 0.87, 0.87)}),
            Row(f"cosine > {USE_COSINE_CUT_OFF} (USE scale)", "cosine-paragraph-use-cutoff"),
            Row(f"multi-path + reranker score > {RERANK_CUT_OFF}", "multipath-rerank-cutoff",
                {"recall": (0.86, 0.88, 0.88), "context_relevance": (0.87, 0.87, 0.87)}),
        ]),
    "reranking_mrr": Table(
        "MRR@k before and after reranking (chapter: bge-reranker-large; ours: offline)",
        ("mrr",), [
            Row("paragraph BM25 (chapter: unsorted)", "bm25-paragraph",
                {"mrr": (0.9411, 0.6132, 0.4468)}),
            Row("paragraph BM25 top 20 + reranker", "bm25-paragraph-rerank",
                {"mrr": (0.9411, 0.9704, 0.9741)}),
            Row("multi-path top 20×3 + reranker", "multipath-rerank",
                {"mrr": (0.9411, 0.9704, 0.9741)}),
        ]),
}


ANSWERABILITY = "answerability"  # the table that is not a recall table (and not the chapter's)


def reproduce(kb: KnowledgeBase, tables: list[str] | None = None) -> dict[str, Any]:
    """Evaluate every row of the chosen tables (default: all, ``answerability`` last);
    returns a JSON-ready dict: ``tables`` (the recall tables) and ``answerability``."""
    started = time.perf_counter()
    unknown = sorted(set(tables or []) - set(TABLES) - {ANSWERABILITY})
    if unknown:
        raise ValueError(f"unknown table(s) {unknown}; choose from "
                         f"{sorted([*TABLES, ANSWERABILITY])}")
    chosen = tables or [*TABLES, ANSWERABILITY]
    results: dict[str, dict[str, Any]] = {}
    report: dict[str, Any] = {"tables": {}}
    for key in chosen:
        if key == ANSWERABILITY:
            continue
        table = TABLES[key]
        rows = []
        for row in table.rows:
            if row.pipeline not in results:
                results[row.pipeline] = evaluate(kb, row.pipeline)
            rows.append({"label": row.label, "pipeline": row.pipeline,
                         "chapter": {m: row.chapter.get(m) for m in table.metrics},
                         "ours": results[row.pipeline]})
        report["tables"][key] = {"title": table.title, "metrics": list(table.metrics),
                                 "rows": rows}
    if ANSWERABILITY in chosen:
        report[ANSWERABILITY] = (
            evaluate_answerability(kb) if answerability_possible(kb) else
            {"skipped": "too few paragraphs with questions to hold some out in 5 folds"})
    report["seconds"] = round(time.perf_counter() - started, 2)
    return report


def format_report(report: dict[str, Any], timing: bool = True) -> str:
    """Text tables, each cell ``chapter→ours`` at top 1/3/5 (several metrics joined by /)."""
    out = []
    for table in report["tables"].values():
        metrics = table["metrics"]
        out.append(f"\n{table['title']} — {' / '.join(metrics)}")
        width = max(13 * len(metrics) - 1, 17)
        header = f"{'setting':<40}" + "".join(f"{'top ' + str(k):>{width}}" for k in KS)
        out.append(header)
        out.append("-" * len(header))
        for row in table["rows"]:
            cells = []
            for i, k in enumerate(KS):
                parts = [_pair(row["chapter"][m], i, row["ours"][f"{m}@{k}"], m == "mrr")
                         for m in metrics]
                cells.append(f"{' / '.join(parts):>{width}}")
            out.append(f"{row['label']:<40}" + "".join(cells))
    out.append("\ncells of the tables above: chapter→ours")
    if ANSWERABILITY in report:
        out.extend(_answerability_lines(report[ANSWERABILITY]))
    if timing:
        out.append(f"\n{report['seconds']} s in all")
    return "\n".join(out)


def _answerability_lines(result: dict[str, Any]) -> list[str]:
    """The answerability table (notebook 12): not the chapter's, so no "chapter→" cells."""
    title = ("\nAnswerability: does the knowledge base hold the answer at all? (not in the "
             "chapter) — auroc / declined / wrongly declined")
    if "skipped" in result:
        return [title, f"skipped: {result['skipped']}"]
    lines = [title,
             f"{result['removed_paragraphs']} paragraphs removed (seed {result['seed']}): "
             f"{result['answerable']} answerable, {result['unanswerable']} unanswerable "
             f"questions; thresholds chosen on calibration folds for ≤ "
             f"{result['max_wrong']:.0%} wrongly declined, all numbers on the "
             f"{result['folds']} held-out folds",
             f"{'setting':<40}{'AUROC':>10}{'unanswerable declined':>24}"
             f"{'answerable declined':>22}"]
    lines.append("-" * len(lines[-1]))
    for row in result["rows"]:
        lines.append(f"{row['label']:<40}{row['auroc']:>10.4f}{row['declined']:>24.3f}"
                     f"{row['wrongly_declined']:>22.3f}")
    return lines


def _pair(chapter: Triple | None, i: int, ours: float, four_digits: bool) -> str:
    """The chapter printed 2 decimals (4 for MRR); ours get one more, to show small gaps."""
    digits = 4 if four_digits else 2
    theirs = "–" if chapter is None else f"{chapter[i]:.{digits}f}"
    return f"{theirs}→{ours:.{digits + (0 if four_digits else 1)}f}"
