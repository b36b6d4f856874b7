"""What each stage of ``multipath-rerank`` adds: the system against itself with one part
taken out — one of its three paths, or the reranker (reciprocal rank fusion orders the
union instead) — on the same questions, for recall@1 and context relevance@5. Each row is
a paired difference with its 95 % interval and a Holm-adjusted test
(:func:`course_lib.lab.measure.wins.win_loss`): a stage whose removal costs nothing detectable is
"no detectable difference", not "useless".

Notebook 09 runs it on samples of the halves (its time budget);
``python -m course_lib ablations`` (``make ablations``) on whole sets: CMRC 2018 dev (848
paragraphs, 3,219 questions) and DRCD's report half, as written and asked in Simplified.
It chooses nothing: the system is fixed, so no half is needed to choose on.

>>> calls = []
>>> path = remembered(lambda query: calls.append(query) or [query])
>>> path("长城"), path("长城"), calls
(['长城'], ['长城'], ['长城'])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...fusion import MultiRetriever
from ...node import DocNode
from ...rerank import Reranker
from ..data.datasets import KnowledgeBase
from ..data.kb_document import knowledge_base_document
from ..systems.pipelines import paragraph_paths, prepared_reranker, rerank_after
from .evaluation import evaluate
from .wins import Case

METRICS = ("recall@1", "context_relevance@5")
SYSTEM = "multipath-rerank"
Path = Callable[[str], list[DocNode]]


def remembered(path: Path) -> Path:
    """``path`` keeping each question's ranking: it runs once, however many unions read
    it (a copy of the list is returned, so a caller may change it)."""
    seen: dict[str, list[DocNode]] = {}

    def run(query: str) -> list[DocNode]:
        if query not in seen:
            seen[query] = path(query)
        return list(seen[query])

    return run


def three_paths(kb: KnowledgeBase) -> tuple[Any, dict[str, Path]]:
    """``kb``'s document (paragraphs embedded with e5) and multipath-rerank's three paths
    over it (:func:`~course_lib.lab.systems.pipelines.paragraph_paths`), each :func:`remembered`."""
    doc = knowledge_base_document(kb, embed=True)
    return doc, {name: remembered(path) for name, path in paragraph_paths(doc).items()}


def stage_variants(paths: dict[str, Path], reranker: Reranker) -> dict[str, Path]:
    """The system with one stage taken out: ``"without <path>"`` for each path (the other
    two, united and reranked), and ``"RRF instead of the reranker"``."""
    variants = {f"without {name}": rerank_after(
        MultiRetriever({other: p for other, p in paths.items() if other != name}), reranker)
        for name in paths}
    variants["RRF instead of the reranker"] = MultiRetriever(paths, fusion="rrf")
    return variants


def stage_ablations(setting: str, kb: KnowledgeBase, paths: dict[str, Path] | None = None,
                    reranker: Reranker | None = None, full: dict[str, Any] | None = None,
                    metrics: Sequence[str] = METRICS) -> list[Case]:
    """One :class:`~course_lib.lab.measure.wins.Case` per variant and metric: multipath-rerank
    against itself without that stage, on ``kb``'s questions. ``paths``, ``reranker`` and
    ``full`` (the whole system's :func:`~course_lib.lab.measure.evaluation.evaluate` result) are
    built when not given; pass them to reuse a run."""
    if paths is None:
        doc, paths = three_paths(kb)
        reranker = reranker or prepared_reranker(doc)
    elif reranker is None:
        raise ValueError("reranker is needed with paths (the reranker over their documents)")
    if full is None:
        full = evaluate(kb, rerank_after(MultiRetriever(paths), reranker), with_intervals=False)
    cases = []
    for name, variant in stage_variants(paths, reranker).items():
        result = evaluate(kb, variant, with_intervals=False)
        cases += [Case(setting, SYSTEM, name, full, result, metric) for metric in metrics]
    return cases


def ablation_settings() -> dict[str, tuple[str, Callable[[], KnowledgeBase]]]:
    """The whole sets ``python -m course_lib ablations`` measures: key -> (the table's
    name for it, how to load it)."""
    from ..data.datasets import load_cmrc2018_kb
    from ..data.settings import cross_script, drcd_articles

    return {"cmrc-dev": ("CMRC dev, all", lambda: load_cmrc2018_kb(split="dev")),
            "drcd": ("DRCD report half", lambda: drcd_articles("report")),
            "drcd-simplified": ("DRCD report half, Simplified questions",
                                lambda: cross_script(drcd_articles("report")))}
