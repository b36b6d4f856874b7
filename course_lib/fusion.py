"""Multi-path retrieval: run several retrievers, merge what they found, optionally fuse ranks.

* :func:`union` keeps each node once (first occurrence, best score), order of discovery.
* :func:`reciprocal_rank_fusion` scores a node by ``Σ 1 / (k + rank)`` over the lists
  it appears in (Cormack et al., 2009) — only ranks count, so retrievers whose scores
  live on different scales (BM25 ≈ 0–50, cosine ≈ −1–1) combine fairly.
* :class:`MultiRetriever` runs the paths sequentially or in a thread pool.
* :func:`pipeline` and :func:`parallel` are tiny LazyLLM-style combinators.

>>> a, b, c = (DocNode(t, uid=t) for t in "abc")
>>> [n.uid for n in reciprocal_rank_fusion([[a, b], [b, c]])]
['b', 'a', 'c']
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .node import DocNode
from .ranking import round_score
from .validation import check_int, check_number

RRF_K = 60


def union(rankings: Sequence[Sequence[DocNode]]) -> list[DocNode]:
    """All nodes of all lists, each once, in order of first appearance, keeping the best score."""
    merged: dict[str, DocNode] = {}
    for ranking in rankings:
        for node in ranking:
            seen = merged.get(node.uid)
            if seen is None:
                merged[node.uid] = copy.copy(node)  # never touch the caller's nodes
            elif node.score is not None and (seen.score is None or node.score > seen.score):
                merged[node.uid] = seen.with_score(node.score)
    return list(merged.values())


def reciprocal_rank_fusion(rankings: Sequence[Sequence[DocNode]], k: int = RRF_K,
                           topk: int | None = None) -> list[DocNode]:
    """Fuse ranked lists by reciprocal rank; the fused score replaces the node's score."""
    k = check_number(k, "k", low=0)
    fused: dict[str, float] = {}
    nodes: dict[str, DocNode] = {}
    for ranking in rankings:
        for rank, node in enumerate(ranking, start=1):
            fused[node.uid] = fused.get(node.uid, 0.0) + 1.0 / (k + rank)
            nodes.setdefault(node.uid, node)
    order = sorted(fused, key=lambda uid: -round_score(fused[uid]))  # ties: discovery order
    result = [nodes[uid].with_score(fused[uid]) for uid in order]
    return result if topk is None else result[:topk]


class MultiRetriever:
    """Several retrieval paths for one query, merged by union (default) or RRF.

    ``paths`` maps a name to a callable ``query -> nodes``. Each returned node records
    the path(s) that found it in ``found_by`` (a dict name -> rank, starting at 1).
    """

    def __init__(self, paths: dict[str, Callable[[str], list[DocNode]]], fusion: str = "union",
                 max_workers: int = 0, topk: int | None = None) -> None:
        if not paths:
            raise ValueError("paths is empty: give at least one retriever")
        if fusion not in ("union", "rrf"):
            raise ValueError(f"fusion must be 'union' or 'rrf', got {fusion!r}")
        max_workers = check_int(max_workers, "max_workers", low=0)
        self.paths, self.fusion = dict(paths), fusion
        self.max_workers, self.topk = max_workers, topk

    def run_paths(self, query: str) -> dict[str, list[DocNode]]:
        """Each path's own ranking (in a thread pool when ``max_workers`` > 0)."""
        if self.max_workers:
            with ThreadPoolExecutor(self.max_workers) as pool:
                futures = {name: pool.submit(path, query) for name, path in self.paths.items()}
                return {name: future.result() for name, future in futures.items()}
        return {name: path(query) for name, path in self.paths.items()}

    def __call__(self, query: str) -> list[DocNode]:
        per_path = self.run_paths(query)
        rankings = list(per_path.values())
        merged = union(rankings) if self.fusion == "union" else reciprocal_rank_fusion(rankings)
        found_by = {n.uid: {name: rank for name, ranking in per_path.items()
                            for rank, m in enumerate(ranking, start=1) if m.uid == n.uid}
                    for n in merged}
        for node in merged:
            node.found_by = found_by[node.uid]
        return merged if self.topk is None else merged[: self.topk]


class pipeline:  # noqa: N801 (LazyLLM's lower-case name)
    """``pipeline(f, g, h)(x) == h(g(f(x)))``."""

    def __init__(self, *steps: Callable[..., Any]) -> None:
        if not steps:
            raise ValueError("pipeline needs at least one step")
        self.steps = steps

    def __call__(self, value: Any) -> Any:
        for step in self.steps:
            value = step(value)
        return value


class parallel:  # noqa: N801 (LazyLLM's lower-case name)
    """``parallel(f, g)(x) == (f(x), g(x))``; ``parallel(f, g).sum`` adds the results up
    (for lists: concatenates them), as LazyLLM's ``parallel(...).sum``."""

    def __init__(self, *branches: Callable[..., Any], _sum: bool = False) -> None:
        if not branches:
            raise ValueError("parallel needs at least one branch")
        self.branches, self._sum = branches, _sum

    @property
    def sum(self) -> parallel:
        return parallel(*self.branches, _sum=True)

    def __call__(self, value: Any) -> Any:
        results = tuple(branch(value) for branch in self.branches)
        if not self._sum:
            return results
        total = results[0]
        for result in results[1:]:
            total = total + result
        return total
