"""DocNode: one unit of text in the node-group tree.

Every node belongs to a *group* ("CoarseChunk", "paragraph", ...). A node made by a
transform remembers the node it came from (``parent``), and the parent keeps its
children per group, so retrieval can move between small and big units.

>>> root = DocNode("第一句。第二句。", group="root", uid="a.txt")
>>> child = DocNode("第一句。", group="sentence", uid="a.txt/sentence[0]", parent=root)
>>> root.children["sentence"] = [child]
>>> child.root is root
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .ranking import round_score


@dataclass(eq=False)
class DocNode:
    """A piece of text with its place in the tree.

    ``score`` is ``None`` on stored nodes; the retriever hands back copies with the
    score filled in, so one query never changes what another query sees.
    """

    text: str
    group: str = "root"
    uid: str = ""
    parent: DocNode | None = field(default=None, repr=False)
    children: dict[str, list[DocNode]] = field(default_factory=dict, repr=False)
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)
    # Facts about the whole document (a source, a licence): a Document gives every node
    # the one dict it was made with, shared, not copied — unlike ``metadata``, which each
    # node copies from its parent and may extend.
    global_metadata: dict[str, Any] = field(default_factory=dict, repr=False)
    embeddings: dict[str, Any] = field(default_factory=dict, repr=False)
    score: float | None = None
    # Set on retrieved copies by multi-path retrieval: path name -> rank in that path.
    found_by: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def root(self) -> DocNode:
        """The document node this node was cut from."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def get_content(self) -> str:
        """The text handed to a generator (LazyLLM's name for it)."""
        return self.text

    def with_score(self, score: float) -> DocNode:
        """A shallow copy carrying ``score``; tree links are shared with the original."""
        # copy.copy's result, without its generic machinery (a fifth of a BM25 query's
        # time went there): a new object of the same class holding the same attributes
        scored = object.__new__(type(self))
        scored.__dict__.update(self.__dict__)
        scored.score = round_score(score)  # ranked and compared at a fixed precision
        return scored

    # Identity is the uid: a scored copy equals its stored node, so results dedupe.
    def __eq__(self, other: object) -> bool:
        return isinstance(other, DocNode) and self.uid == other.uid

    def __hash__(self) -> int:
        return hash(self.uid)

    def __repr__(self) -> str:
        preview = self.text if len(self.text) <= 30 else self.text[:30] + "…"
        score = "" if self.score is None else f", score={self.score:.4f}"
        return f"DocNode(group={self.group!r}, uid={self.uid!r}, text={preview!r}{score})"
