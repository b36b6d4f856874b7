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
import json
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from types import GeneratorType
from typing import Any

from ._support.validation import check_int, check_text
from .index import GroupIndex
from .node import DocNode
from .readers import READERS, ROOT, read_roots, register_reader
from .text_splitter import SentenceSplitter

__all__ = ["BUILTIN_GROUPS", "READERS", "ROOT", "Document", "GroupRule", "NodeTransform",
           "as_embed_dict", "check_global_metadata", "register_reader"]


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


# ---------------------------------------------------------------- the document
class Document:
    """A set of documents and the node groups defined over them.

    Give exactly one source: ``dataset_path`` (a folder, read recursively),
    ``files`` (a list of paths) or ``texts`` (a list of strings or a ``{name: text}``
    dict). What is read and what is refused — non-regular files, symlinks leaving the
    folder, files over ``course_lib.readers.MAX_FILE_BYTES``, text that is not UTF-8, an
    empty source — is described in :mod:`course_lib.readers`.
    ``embed`` is a function ``texts -> vectors`` or a ``{key: function}`` dict, used by
    embedding similarities such as ``cosine``; ``store`` (e.g. a
    :class:`~course_lib.store.milvus_store.MilvusStore`) keeps the vectors in a vector database.

    ``global_metadata`` holds facts about the whole collection (a source, a licence): a
    dict with string keys and JSON values (so :mod:`course_lib.store.persist` can save it). It
    is ``doc.global_metadata``, and every node's ``global_metadata`` is that same dict —
    shared, not copied, so a change is seen by every node — while ``metadata`` is per
    node: a root's describes its file, and each node cut from it copies its parent's and
    may add its own.

    >>> doc = Document(texts={"a.txt": "甲。"}, global_metadata={"licence": "CC0"})
    >>> node = doc.get_nodes("FineChunk")[0]
    >>> node.global_metadata, node.global_metadata is doc.global_metadata
    ({'licence': 'CC0'}, True)
    """

    def __init__(self, dataset_path: str | os.PathLike[str] | None = None, *,
                 files: Iterable[str | os.PathLike[str]] | None = None,
                 texts: Sequence[str] | dict[str, str] | None = None,
                 embed: Callable[[list[str]], Any] | dict[str, Callable[[list[str]], Any]]
                 | None = None, store: Any = None,
                 global_metadata: dict[str, Any] | None = None) -> None:
        embed = as_embed_dict(embed)  # checked before any file is read
        global_metadata = check_global_metadata(global_metadata)
        self._setup(read_roots(dataset_path, files=files, texts=texts), embed, store,
                    global_metadata)

    def _setup(self, roots: list[DocNode], embed: dict[str, Callable[[list[str]], Any]],
               store: Any, global_metadata: dict[str, Any]) -> None:
        self.global_metadata = global_metadata
        for root in roots:
            root.global_metadata = global_metadata
        self._rules: dict[str, GroupRule] = {}
        self._nodes: dict[str, list[DocNode]] = {ROOT: roots}
        self._indexes: dict[str, GroupIndex] = {}
        self.embed = embed
        self.store = store  # e.g. a MilvusStore; used by Retriever(index="milvus")
        for name, (size, overlap) in BUILTIN_GROUPS.items():
            self.create_node_group(name, SentenceSplitter, chunk_size=size, chunk_overlap=overlap)

    @classmethod
    def from_nodes(cls, nodes: Iterable[DocNode], parents: dict[str, str], *,
                   embed: Any = None, store: Any = None,
                   global_metadata: dict[str, Any] | None = None) -> Document:
        """A document over nodes made elsewhere — e.g. loaded by :mod:`course_lib.store.persist`.

        ``nodes`` hold every node of every built group, each parent before its
        children, each non-root node's ``parent`` set; ``parents`` maps every non-root
        group to its parent group. The document takes the nodes over: their
        ``children`` lists are rebuilt from the ``parent`` links. Those groups have no
        transform (it was not saved): they cannot be rebuilt, but the built-in chunk
        groups over the roots can. Every node gets ``global_metadata`` (one shared dict).
        """
        doc = cls.__new__(cls)  # not cls(texts={}): that refuses an empty knowledge base
        doc._setup([], as_embed_dict(embed), store, check_global_metadata(global_metadata))
        doc._nodes = {ROOT: [], **{name: [] for name in parents}}  # all built, maybe empty
        for name, parent in parents.items():
            if name == ROOT:
                raise ValueError(f"{ROOT!r} has no parent group")
            doc._rules[name] = GroupRule(name, _not_rebuildable(name), parent, False, 0)
        for name in parents:
            doc._chain(name)  # raises on an unknown parent or a cycle
        nodes = list(nodes)
        for node in nodes:
            node.children = {}
            node.global_metadata = doc.global_metadata
        for node in nodes:
            if node.group not in doc.groups():
                raise ValueError(f"node {node.uid!r} is in group {node.group!r}, which "
                                 f"parents= does not name")
            expected = None if node.group == ROOT else parents[node.group]
            found = None if node.parent is None else node.parent.group
            if found != expected:
                raise ValueError(f"node {node.uid!r} of group {node.group!r} has a parent in "
                                 f"{found!r}; expected {expected!r}")
            doc._nodes.setdefault(node.group, []).append(node)
            if node.parent is not None:
                node.parent.children.setdefault(node.group, []).append(node)
        return doc

    # -- node groups --------------------------------------------------------
    def create_node_group(self, name: str, transform: Callable[..., Any] | type, *,
                          parent: str = ROOT, trans_node: bool = False, num_workers: int = 0,
                          **kwargs: Any) -> None:
        """Record a rule; nothing is built until the group is first used.

        ``transform`` may be a function, a lambda, an object with ``__call__`` or a class
        (then it is constructed with ``**kwargs``). It receives the parent's text, or the
        parent node itself when ``trans_node=True`` or it is a :class:`NodeTransform`.
        It must return a str, a :class:`DocNode` whose text is a str, a list (or
        generator) of them, or ``None``; blank results are dropped. Anything else is a
        ``TypeError`` naming the transform, the group and the parent node; an exception
        raised by the transform itself propagates unchanged, with a note naming them.
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
        num_workers = check_int(num_workers, "num_workers", low=0)
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
        """The children of ``parent`` in ``rule``'s group, checked and linked."""
        try:
            result = rule.transform(parent if rule.trans_node else parent.text)
            if isinstance(result, GeneratorType):
                result = list(result)  # a generator runs here: its errors get the note too
        except Exception as error:
            given = "the parent DocNode" if rule.trans_node else (
                "the parent's text (a str; pass trans_node=True to get the DocNode)")
            error.add_note(f"in transform {_transform_name(rule.transform)} of node group "
                           f"{rule.name!r}, on parent node {parent.uid!r}; it was given {given}")
            raise
        where = f"transform {_transform_name(rule.transform)} of group {rule.name!r}"
        if result is None:
            result = []
        elif isinstance(result, (str, DocNode)):
            result = [result]
        elif not isinstance(result, (list, tuple)):
            raise TypeError(f"{where} must return str, DocNode or a list of them (or None), "
                            f"got {type(result).__name__} for parent node {parent.uid!r}")
        children = []
        for item in result:
            if isinstance(item, DocNode):
                if item.global_metadata and item.global_metadata is not parent.global_metadata:
                    raise ValueError(f"{where} returned a DocNode with its own global_metadata "
                                     f"({item.global_metadata!r:.60}) for parent node "
                                     f"{parent.uid!r}; global_metadata belongs to the whole "
                                     "Document (Document(..., global_metadata=...)): put facts "
                                     "about this node in its metadata")
                if not isinstance(item.text, str):
                    raise TypeError(f"{where} returned a DocNode whose text is "
                                    f"{type(item.text).__name__} ({item.text!r:.40}) for parent "
                                    f"node {parent.uid!r}; it must return str, a DocNode whose "
                                    "text is a str, or a list of them")
                # A fresh node (same class, same extra fields): the transform may hand back
                # a node that is already in the tree.
                item = dataclasses.replace(item, parent=None, children={}, embeddings={},
                                           metadata=dict(item.metadata), score=None)
            elif isinstance(item, str):
                item = DocNode(item)
            else:
                raise TypeError(f"{where} returned {type(item).__name__} {item!r:.40} inside "
                                f"its list for parent node {parent.uid!r}; expected str or "
                                "DocNode")
            if not item.text.strip():
                continue  # empty results are dropped
            check_text(item.text, f"node {len(children)} made by {where} from {parent.uid!r}")
            item.group = rule.name
            item.uid = f"{parent.uid}/{rule.name}[{len(children)}]"
            item.parent = parent
            item.metadata = {**parent.metadata, **item.metadata}
            item.global_metadata = parent.global_metadata  # shared, not copied
            children.append(item)
        parent.children[rule.name] = children
        return children

    def _check_group(self, group: str) -> None:
        if group != ROOT and group not in self._rules:
            raise ValueError(f"unknown node group {group!r}; known groups: {self.groups()}")

    def index(self, group: str) -> GroupIndex:
        """The indexes built over ``group`` (BM25, vectors), each built on first use."""
        self._check_group(group)
        if group not in self._indexes:
            self._indexes[group] = GroupIndex(self, group)
        return self._indexes[group]

    # -- moving through the tree -------------------------------------------
    def _chain(self, group: str) -> list[str]:
        """``group``, its parent, ... up to the root."""
        chain = [group]
        while chain[-1] != ROOT:
            rule = self._rules.get(chain[-1])
            if rule is None or rule.parent in chain:
                raise ValueError(f"node group {chain[-1]!r} has no path to {ROOT!r} "
                                 f"(unknown parent or a cycle): {chain}")
            chain.append(rule.parent)
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


def _transform_name(transform: Any) -> str:
    """How an error message names a transform: ``split_lines``, ``SplitOn(...)``, ``<lambda>``."""
    if isinstance(transform, partial):
        return _transform_name(transform.func)
    name = getattr(transform, "__qualname__", None)
    if isinstance(name, str):
        return name.replace(".<locals>", "")
    return f"{type(transform).__name__}(...)"


def _not_rebuildable(name: str) -> Callable[[Any], Any]:
    def transform(_: Any) -> Any:
        raise RuntimeError(f"group {name!r} was made from saved nodes; its transform was "
                           "not saved, so it cannot be built again")

    return transform


def check_global_metadata(value: Any) -> dict[str, Any]:
    """``value`` as a fresh dict of ``global_metadata`` (``None``: empty), or a
    ``TypeError`` naming what is wrong: it must be a dict with string keys whose values
    JSON can hold, so that a saved knowledge base keeps them.

    >>> check_global_metadata({"year": 2018})
    {'year': 2018}
    >>> check_global_metadata({"when": {1, 2}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: global_metadata['when'] is a set, which JSON cannot hold (it is saved ...
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"global_metadata must be a dict such as {{'source': 'CMRC 2018'}}, "
                        f"got {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"global_metadata keys must be strings, got {type(key).__name__} "
                            f"{key!r:.40}")
        try:
            json.dumps(item, allow_nan=False)
        except (TypeError, ValueError):
            raise TypeError(f"global_metadata[{key!r}] is a {type(item).__name__}, which JSON "
                            "cannot hold (it is saved with the knowledge base): use strings, "
                            "numbers, true/false, None, lists or dicts") from None
    return dict(value)


def as_embed_dict(embed: Any) -> dict[str, Callable[[list[str]], Any]]:
    """A ``Document``'s ``embed=`` argument as ``{key: function}`` (``None`` -> ``{}``, one
    function -> ``{"default": it}``), or ``TypeError``; :func:`course_lib.store.persist.load`
    checks its argument with it."""
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
