"""Document: files become root nodes; node groups are rules that cut nodes into nodes.

A node group is a *rule* — a name, a transform and a parent group. Creating one
builds nothing. The first time a group is used, its parent is built (and its
parent's parent, up to the root), then the transform runs over every parent node of
every document. Each new node points to its parent, and the parent lists its children
per group, which is what makes small-to-big retrieval possible.

>>> doc = Document(texts={"a.txt": "第一段。\\n第二段。"})
>>> doc.create_node_group("paragraph", transform=lambda text: text.split("\\n"))
>>> [node.text for node in doc.get_nodes("paragraph")]
['第一段。', '第二段。']
>>> doc.find("root")(doc.get_nodes("paragraph"))[0].uid
'a.txt'
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from .node import DocNode
from .text_splitter import SentenceSplitter

ROOT = "root"


class NodeTransform:
    """Base class for transforms with rules too complex for a function.

    Override :meth:`transform`; it receives a :class:`DocNode` and returns strings
    and/or DocNodes. Constructor arguments come from ``create_node_group(**kwargs)``.
    """

    def transform(self, node: DocNode) -> list[str | DocNode]:
        raise NotImplementedError("a NodeTransform subclass must implement transform(node)")

    def __call__(self, node: DocNode) -> list[str | DocNode]:
        return self.transform(node)


@dataclass
class GroupRule:
    name: str
    transform: Callable[[Any], Any]
    parent: str
    trans_node: bool
    num_workers: int


# ---------------------------------------------------------------- readers
def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


READERS: dict[str, Callable[[Path], str]] = {".txt": _read_text, ".md": _read_text}


def register_reader(suffix: str, reader: Callable[[Path], str]) -> None:
    """Read files ending in ``suffix`` (e.g. ``".csv"``) with ``reader(path) -> text``."""
    if not suffix.startswith("."):
        raise ValueError(f"suffix must start with '.', got {suffix!r}")
    READERS[suffix.lower()] = reader


def _file_metadata(path: Path) -> dict[str, Any]:
    stat = path.stat()
    return {
        "file_name": path.name,
        "file_path": str(path),
        "file_type": path.suffix.lstrip("."),
        "file_size": stat.st_size,
        "modified": dt.datetime.fromtimestamp(stat.st_mtime).isoformat(timespec="seconds"),
        "created": dt.datetime.fromtimestamp(stat.st_ctime).isoformat(timespec="seconds"),
    }


# ---------------------------------------------------------------- the document
class Document:
    """A set of documents and the node groups defined over them.

    Give exactly one source: ``dataset_path`` (a folder, read recursively),
    ``files`` (paths) or ``texts`` (a list of strings or a ``{name: text}`` dict).
    ``embed`` is a function ``texts -> vectors`` or a ``{key: function}`` dict, used by
    embedding similarities such as ``cosine``; ``store`` (e.g. a
    :class:`~course_lib.milvus_store.MilvusStore`) keeps the vectors in a vector database.
    """

    def __init__(self, dataset_path: str | os.PathLike[str] | None = None, *,
                 files: Iterable[str | os.PathLike[str]] | None = None,
                 texts: Sequence[str] | dict[str, str] | None = None,
                 embed: Callable[[list[str]], Any] | dict[str, Callable[[list[str]], Any]]
                 | None = None, store: Any = None) -> None:
        sources = [s is not None for s in (dataset_path, files, texts)]
        if sum(sources) != 1:
            raise ValueError("give exactly one of dataset_path=, files= or texts=")
        self._rules: dict[str, GroupRule] = {}
        self._nodes: dict[str, list[DocNode]] = {}
        self._caches: dict[str, dict[str, Any]] = {}
        self.embed = _as_embed_dict(embed)
        self.store = store  # e.g. a MilvusStore; used by Retriever(index="milvus")
        self._nodes[ROOT] = self._read_roots(dataset_path, files, texts)
        for name, (size, overlap) in BUILTIN_GROUPS.items():
            self.create_node_group(name, SentenceSplitter, chunk_size=size, chunk_overlap=overlap)

    # -- reading ------------------------------------------------------------
    @staticmethod
    def _read_roots(dataset_path: Any, files: Any, texts: Any) -> list[DocNode]:
        if texts is not None:
            items = texts.items() if isinstance(texts, dict) else (
                (f"text_{i}", t) for i, t in enumerate(texts))
            roots = []
            for name, text in items:
                if not isinstance(text, str):
                    raise TypeError(f"texts must hold strings, got {type(text).__name__} "
                                    f"for {name!r}")
                roots.append(DocNode(text, group=ROOT, uid=name,
                                     metadata={"file_name": name, "file_type": "text",
                                               "file_size": len(text.encode("utf-8"))}))
            return roots
        if dataset_path is not None:
            folder = Path(dataset_path)
            if not folder.is_dir():
                raise FileNotFoundError(f"dataset_path {str(folder)!r} is not a folder")
            paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in READERS)
            if not paths:
                raise ValueError(f"dataset_path {str(folder)!r} holds no readable files "
                                 f"(known suffixes: {sorted(READERS)}; see register_reader)")
        else:
            paths = [Path(p) for p in files]
        roots = []
        for path in paths:
            reader = READERS.get(path.suffix.lower())
            if reader is None:
                raise ValueError(f"no reader for {path.name!r}; known suffixes: "
                                 f"{sorted(READERS)} (add one with register_reader)")
            uid = str(path.relative_to(dataset_path)) if dataset_path is not None else str(path)
            roots.append(DocNode(reader(path), group=ROOT, uid=uid,
                                 metadata=_file_metadata(path)))
        return roots

    # -- node groups --------------------------------------------------------
    def create_node_group(self, name: str, transform: Callable[..., Any] | type, *,
                          parent: str = ROOT, trans_node: bool = False, num_workers: int = 0,
                          **kwargs: Any) -> None:
        """Record a rule; nothing is built until the group is first used.

        ``transform`` may be a function, a lambda, an object with ``__call__`` or a class
        (then it is constructed with ``**kwargs``). It receives the parent's text, or the
        parent node itself when ``trans_node=True`` or it is a :class:`NodeTransform`.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if name == ROOT or name in self._rules:
            raise ValueError(f"node group {name!r} already exists")
        if parent == name:
            raise ValueError(f"node group {name!r} cannot be its own parent (a cycle)")
        if parent != ROOT and parent not in self._rules:
            raise ValueError(f"unknown parent group {parent!r}; define it first. "
                             f"Known groups: {self.groups()}")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers must be an integer >= 0, got {num_workers!r}")
        if isinstance(transform, type):
            transform = transform(**kwargs)
        elif kwargs:
            transform = partial(transform, **kwargs)
        if not callable(transform):
            raise TypeError(f"transform for {name!r} must be callable, got "
                            f"{type(transform).__name__}")
        trans_node = trans_node or isinstance(transform, (NodeTransform, SentenceSplitter))
        self._rules[name] = GroupRule(name, transform, parent, trans_node, num_workers)

    def groups(self) -> list[str]:
        """All group names, root first."""
        return [ROOT, *self._rules]

    def built_groups(self) -> list[str]:
        """Groups whose nodes exist already (the others are only rules so far)."""
        return [g for g in self.groups() if g in self._nodes]

    def parent_of(self, group: str) -> str | None:
        self._check_group(group)
        return None if group == ROOT else self._rules[group].parent

    def get_nodes(self, group: str) -> list[DocNode]:
        """The nodes of ``group`` over all documents, built on first use."""
        self._check_group(group)
        if group not in self._nodes:
            rule = self._rules[group]
            parents = self.get_nodes(rule.parent)
            self._nodes[group] = self._build(rule, parents)
        return self._nodes[group]

    def _build(self, rule: GroupRule, parents: list[DocNode]) -> list[DocNode]:
        run = partial(self._transform_one, rule)
        if rule.num_workers > 0:
            with ThreadPoolExecutor(rule.num_workers) as pool:
                per_parent = list(pool.map(run, parents))
        else:
            per_parent = [run(p) for p in parents]
        return [node for children in per_parent for node in children]

    @staticmethod
    def _transform_one(rule: GroupRule, parent: DocNode) -> list[DocNode]:
        result = rule.transform(parent if rule.trans_node else parent.text)
        if result is None:
            result = []
        elif isinstance(result, (str, DocNode)):
            result = [result]
        elif not isinstance(result, (list, tuple)):
            raise TypeError(f"transform of group {rule.name!r} must return str, DocNode or a "
                            f"list of them, got {type(result).__name__}")
        children = []
        for item in result:
            if isinstance(item, DocNode):
                # A fresh node (same class, same extra fields): the transform may hand back
                # a node that is already in the tree.
                item = dataclasses.replace(item, parent=None, children={}, embeddings={},
                                           metadata=dict(item.metadata), score=None)
            elif isinstance(item, str):
                item = DocNode(item)
            else:
                raise TypeError(f"transform of group {rule.name!r} returned a "
                                f"{type(item).__name__} inside its list; expected str or DocNode")
            if not item.text.strip():
                continue  # empty results are dropped
            item.group = rule.name
            item.uid = f"{parent.uid}/{rule.name}[{len(children)}]"
            item.parent = parent
            item.metadata = {**parent.metadata, **item.metadata}
            children.append(item)
        parent.children[rule.name] = children
        return children

    def _check_group(self, group: str) -> None:
        if group != ROOT and group not in self._rules:
            raise ValueError(f"unknown node group {group!r}; known groups: {self.groups()}")

    def cache_for(self, group: str) -> dict[str, Any]:
        """Per-group storage for indexes built over the group's nodes."""
        return self._caches.setdefault(group, {})

    # -- moving through the tree -------------------------------------------
    def _chain(self, group: str) -> list[str]:
        chain = [group]
        while chain[-1] != ROOT:
            chain.append(self._rules[chain[-1]].parent)
        return chain

    def find(self, group: str) -> Callable[[Iterable[DocNode]], list[DocNode]]:
        """``find(group)(nodes)``: the nodes of ``group`` related to ``nodes``.

        Goes up to ancestors ("small-to-big"), down to descendants, or up to the
        nearest common ancestor group and then down (for a sibling group). The result
        is deduplicated and keeps the order of the input; a found node carries the
        score of the first input node that led to it.
        """
        self._check_group(group)
        target_chain = self._chain(group)

        def finder(nodes: Iterable[DocNode]) -> list[DocNode]:
            found: dict[str, DocNode] = {}
            for node in nodes:
                for hit in self._related(node, group, target_chain):
                    if hit.uid not in found:
                        found[hit.uid] = hit if node.score is None else hit.with_score(node.score)
            return list(found.values())

        return finder

    def _related(self, node: DocNode, group: str, target_chain: list[str]) -> list[DocNode]:
        source_chain = self._chain(node.group)
        common = next(g for g in source_chain if g in target_chain)
        for _ in range(source_chain.index(common)):
            node = node.parent
        frontier = [node]
        self.get_nodes(group)  # make sure the descendants exist
        for step in reversed(target_chain[: target_chain.index(common)]):
            frontier = [child for n in frontier for child in n.children.get(step, [])]
        return frontier

    # -- embeddings -----------------------------------------------------------
    def embeddings(self, group: str, key: str) -> Any:
        """Vectors of all nodes of ``group`` under embed ``key``, computed once.

        Dense embedders give an ``(n, dim)`` array, sparse ones a list of
        ``{term_id: weight}`` dicts. A sparse embedder with a ``fit`` method (such as
        :class:`~course_lib.embeddings.CharNgramSparseEmbedder`) is first fitted on the
        group's texts, so its idf reflects this corpus.
        """
        if key not in self.embed:
            raise ValueError(f"unknown embed key {key!r}; this document has "
                             f"{sorted(self.embed) or 'no embed= functions'}")
        cache = self.cache_for(group)
        name = f"embeddings:{key}"
        if name not in cache:
            nodes = self.get_nodes(group)
            texts = [n.text for n in nodes]
            embedder = self.embed[key]
            if hasattr(embedder, "fit") and not getattr(embedder, "fitted", True):
                embedder.fit(texts)
            vectors = embedder(texts)
            if not (isinstance(vectors, list) and all(isinstance(v, dict) for v in vectors)):
                vectors = np.asarray(vectors, dtype=np.float32)
                if vectors.ndim != 2 or vectors.shape[0] != len(nodes):
                    raise ValueError(f"embed {key!r} returned shape {vectors.shape}; expected "
                                     f"({len(nodes)}, dim)")
            elif len(vectors) != len(nodes):
                raise ValueError(f"embed {key!r} returned {len(vectors)} sparse vectors for "
                                 f"{len(nodes)} nodes")
            for node, vector in zip(nodes, vectors, strict=True):
                node.embeddings[key] = vector
            cache[name] = vectors
        return cache[name]

    def embed_query(self, key: str, query: str) -> Any:
        """The query's vector under ``key`` (sparse embedders may weigh queries differently)."""
        embedder = self.embed[key]
        if hasattr(embedder, "embed_query"):
            return embedder.embed_query(query)
        vector = embedder([query])[0]
        return vector if isinstance(vector, dict) else np.asarray(vector, dtype=np.float32)


def _as_embed_dict(embed: Any) -> dict[str, Callable[[list[str]], Any]]:
    if embed is None:
        return {}
    if callable(embed):
        return {"default": embed}
    if isinstance(embed, dict) and all(callable(f) for f in embed.values()):
        return dict(embed)
    raise TypeError("embed must be a function texts -> vectors or a {key: function} dict")


# Built-in groups (size / overlap, in characters by default).
BUILTIN_GROUPS: dict[str, tuple[int, int]] = {
    "CoarseChunk": (1024, 100),
    "MediumChunk": (256, 25),
    "FineChunk": (128, 12),
}
