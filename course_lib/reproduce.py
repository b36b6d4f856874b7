"""Reproduce the reference chapter's recall tables, our numbers beside theirs.

The chapter's numbers (LazyLLM RAG course, ch. 7, CMRC 2018 trial) are typed in
below from its tables; ours are computed now, on the real data.

>>> [row.pipeline for row in TABLES["chunks_vs_paragraphs"].rows][:1]
['bm25-coarse']
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .datasets import KnowledgeBase
from .evaluation import KS, evaluate


@dataclass
class Row:
    label: str
    pipeline: str
    chapter_recall: tuple[float, float, float] | None
    chapter_relevance: tuple[float, float, float] | None = None


@dataclass
class Table:
    title: str
    rows: list[Row]


TABLES: dict[str, Table] = {
    "chunks_vs_paragraphs": Table(
        "Fixed chunks vs paragraphs (BM25, jieba words): recall / context relevance", [
            Row("fixed 1024 chunks (characters)", "bm25-coarse",
                (0.43, 0.47, 0.48), (0.50, 0.20, 0.12)),
            Row("fixed 1024 chunks (~GPT-2 tokens)", "bm25-coarse-gpt2",
                (0.43, 0.47, 0.48), (0.50, 0.20, 0.12)),
            Row("paragraph group, LazyLLM's tokens", "bm25-paragraph-lazyllm",
                (0.94, 0.97, 0.98), (0.86, 0.30, 0.18)),
            Row("paragraph group, our tokens", "bm25-paragraph",
                (0.94, 0.97, 0.98), (0.86, 0.30, 0.18)),
        ]),
}


def reproduce(kb: KnowledgeBase, tables: list[str] | None = None) -> dict[str, Any]:
    """Evaluate every row of the chosen tables; returns a JSON-ready dict."""
    started = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    report: dict[str, Any] = {"tables": {}}
    for key in tables or list(TABLES):
        table = TABLES[key]
        rows = []
        for row in table.rows:
            if row.pipeline not in results:
                results[row.pipeline] = evaluate(kb, row.pipeline)
            rows.append({"label": row.label, "pipeline": row.pipeline,
                         "chapter_recall": row.chapter_recall,
                         "chapter_context_relevance": row.chapter_relevance,
                         "ours": results[row.pipeline]})
        report["tables"][key] = {"title": table.title, "rows": rows}
    report["seconds"] = round(time.perf_counter() - started, 2)
    return report


def format_report(report: dict[str, Any]) -> str:
    """Text tables: ``chapter → ours`` for recall (and context relevance) at top 1/3/5."""
    out = []
    for table in report["tables"].values():
        out.append(f"\n{table['title']}")
        header = f"{'setting':<36}" + "".join(f"{'top ' + str(k):>22}" for k in KS)
        out.append(header)
        out.append("-" * len(header))
        for row in table["rows"]:
            ours = row["ours"]
            cells = []
            for i, k in enumerate(KS):
                cell = _pair(row["chapter_recall"], i, ours[f"recall@{k}"])
                if row["chapter_context_relevance"] is not None:
                    cell += " / " + _pair(row["chapter_context_relevance"], i,
                                          ours[f"context_relevance@{k}"])
                cells.append(f"{cell:>22}")
            out.append(f"{row['label']:<36}" + "".join(cells))
    out.append("\ncells: chapter→ours, recall / context relevance; "
               f"{report['seconds']} s in all")
    return "\n".join(out)


def _pair(chapter: tuple[float, ...] | None, i: int, ours: float) -> str:
    theirs = "  – " if chapter is None else f"{chapter[i]:.2f}"
    return f"{theirs}→{ours:.2f}"
