"""Multi-path retrieval: run several retrievers, merge what they found, optionally fuse ranks.

* :func:`union` keeps each node once (first occurrence, best score), order of discovery.
* :func:`reciprocal_rank_fusion` scores a node by ``Σ 1 / (k + rank)`` over the lists
  it appears in (Cormack et al., 2009) — only ranks count, so retrievers whose scores
  live on different scales (BM25 ≈ 0–50, cosine ≈ −1–1) combine fairly.
* :class:`MultiRetriever` runs the paths sequentially or in a thread pool.

Joining steps into one callable (``pipeline``, ``parallel``, ``bind``) is the pipeline
language, :mod:`course_lib.flow`; its names still import from here, with a warning.

>>> a, b, c = (DocNode(t, uid=t) for t in "abc")
>>> [n.uid for n in reciprocal_rank_fusion([[a, b], [b, c]])]
['b', 'a', 'c']
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ._support.moved import moved_names
from ._support.validation import check_int, check_number, validate_query, validate_topk
from .node import DocNode
from .ranking import round_score

# A retrieval path: anything that takes a query and returns ranked nodes (a Retriever,
# a fused MultiRetriever, a rewriting retriever, a plain function).
Retrieve = Callable[[str], list[DocNode]]

RRF_K = 60


def _check_rankings(rankings: Sequence[Sequence[DocNode]]) -> None:
    """``rankings`` must be a list of lists of DocNodes; say which element is not."""
    if isinstance(rankings, (str, bytes)) or not isinstance(rankings, (list, tuple)):
        raise TypeError(f"rankings must be a list of rankings (lists of DocNodes), "
                        f"got {type(rankings).__name__}")
    for i, ranking in enumerate(rankings):
        if isinstance(ranking, (str, bytes)) or not isinstance(ranking, (list, tuple)):
            raise TypeError(f"rankings[{i}] must be a list of DocNodes, "
                            f"got {type(ranking).__name__}")
        for j, node in enumerate(ranking):
            if not isinstance(node, DocNode):
                raise TypeError(f"rankings[{i}][{j}] must be a DocNode, "
                                f"got {type(node).__name__}: {node!r:.60}")


def union(rankings: Sequence[Sequence[DocNode]]) -> list[DocNode]:
    """All nodes of all lists, each once, in order of first appearance, keeping the best score."""
    _check_rankings(rankings)
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
    """Fuse ranked lists by reciprocal rank; the fused score replaces the node's score.

    ``k`` (≥ 0, 60 by default) damps the weight of the first ranks; ``topk`` (an integer
    in [1, 10000], or ``None`` for all) cuts the fused list.
    """
    k = check_number(k, "k", low=0)
    topk = None if topk is None else validate_topk(topk)
    _check_rankings(rankings)
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

    ``paths`` maps a name to a callable ``query -> nodes`` (a :class:`Retriever`, or any
    function returning a list of DocNodes — ``[]`` when it finds nothing). Each returned
    node records the path(s) that found it in ``found_by`` (a dict name -> rank, starting
    at 1). ``topk`` (an integer in [1, 10000], or ``None`` for all) cuts the merged list.
    A path that returns anything but a list of DocNodes stops the call with a
    ``TypeError`` naming the path.
    """

    def __init__(self, paths: dict[str, Callable[[str], list[DocNode]]], fusion: str = "union",
                 max_workers: int = 0, topk: int | None = None) -> None:
        if not isinstance(paths, dict):
            raise TypeError(f"paths must be a dict name -> retriever, e.g. {{'bm25': "
                            f"retriever}}, got {type(paths).__name__}")
        if not paths:
            raise ValueError("paths is empty: give at least one retriever")
        for position, (name, path) in enumerate(paths.items(), start=1):
            if not callable(path):
                raise TypeError(f"retrieval path {name!r} (#{position}) must be callable "
                                f"query -> list of DocNodes, got {type(path).__name__}: "
                                f"{path!r:.60}")
        if fusion not in ("union", "rrf"):
            raise ValueError(f"fusion must be 'union' or 'rrf', got {fusion!r}")
        max_workers = check_int(max_workers, "max_workers", low=0)
        self.paths, self.fusion = dict(paths), fusion
        self.max_workers = max_workers
        self.topk = None if topk is None else validate_topk(topk)

    def run_paths(self, query: str) -> dict[str, list[DocNode]]:
        """Each path's own ranking (in a thread pool when ``max_workers`` > 0)."""
        if self.max_workers:
            with ThreadPoolExecutor(self.max_workers) as pool:
                futures = {name: pool.submit(_run_path, name, path, query)
                           for name, path in self.paths.items()}
                found = {name: future.result() for name, future in futures.items()}
        else:
            found = {name: _run_path(name, path, query) for name, path in self.paths.items()}
        return {name: check_path_result(name, self.paths[name], result, position)
                for position, (name, result) in enumerate(found.items(), start=1)}

    def __call__(self, query: str) -> list[DocNode]:
        validate_query(query)
        per_path = self.run_paths(query)
        rankings = list(per_path.values())
        merged = union(rankings) if self.fusion == "union" else reciprocal_rank_fusion(rankings)
        found_by: dict[str, dict[str, int]] = {}  # uid -> {path: its best rank there}
        for name, ranking in per_path.items():
            for rank, m in enumerate(ranking, start=1):
                found_by.setdefault(m.uid, {}).setdefault(name, rank)
        for node in merged:
            node.found_by = found_by[node.uid]
        return merged if self.topk is None else merged[: self.topk]


def _run_path(name: str, path: Callable[[str], Any], query: str) -> Any:
    try:
        return path(query)
    except Exception as error:  # keep its type; say where it came from
        error.add_note(f"(raised in retrieval path {name!r})")
        raise


def check_path_result(name: str, path: Callable[..., Any], result: Any,
                      position: int | None = None) -> list[DocNode]:
    """``result`` as a list if it is a list (or tuple) of DocNodes, else a ``TypeError``
    naming the retrieval path (its name, position and repr) and what it must return."""
    at = "" if position is None else f"#{position}, "
    where = f"retrieval path {name!r} ({at}{path!r:.80})"
    must = "a path must return a list of DocNodes ([] when it finds nothing)"
    if isinstance(result, (str, bytes)) or not isinstance(result, (list, tuple)):
        got = "None" if result is None else f"{result!r:.40} ({type(result).__name__})"
        raise TypeError(f"{where} returned {got}; {must}")
    for i, node in enumerate(result):
        if not isinstance(node, DocNode):
            raise TypeError(f"{where} returned a list whose item [{i}] is {node!r:.40} "
                            f"({type(node).__name__}), not a DocNode; {must}")
    return list(result)


# The pipeline language lived here until it got its own module.
__getattr__ = moved_names(__name__, dict.fromkeys(
    ["INPUT", "PREVIOUS", "bind", "pipeline", "parallel"], "course_lib.flow"))
