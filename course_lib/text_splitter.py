"""SentenceSplitter: cut text into chunks of about ``chunk_size``, overlapping a little.

The recipe, in three steps:

1. cut the text into sentences (after 。！？!? ; or a newline), keeping every
   character, so chunks are exact substrings of the input;
2. a sentence longer than a chunk is cut further at clause marks (，、：,:), then at
   spaces (never mid-word when a space exists), and only then at characters;
3. pack pieces greedily into chunks; each new chunk starts with the last pieces of
   the previous one, up to ``chunk_overlap``.

Sizes count **characters** by default. LazyLLM counts GPT-2 tokens, which needs a
tokenizer download that an offline laptop cannot make; pass ``length_fn`` to count
anything else (see :func:`approx_gpt2_tokens`).

>>> splitter = SentenceSplitter(chunk_size=8, chunk_overlap=0)
>>> splitter.split_text("天很蓝。草很绿。花很红。")
['天很蓝。草很绿。', '花很红。']
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._support.validation import check_int
from .node import DocNode

# A sentence ends after one of these (the closing mark stays with its sentence).
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])")
# English sentence ends: ". " — split after the space so the space is kept.
_EN_SENTENCE_END = re.compile(r"(?<=[.!?] )")
# Fallback boundaries for a sentence longer than a chunk, tried in this order.
_CLAUSE_END = re.compile(r"(?<=[，、：,:])")
_SPACE = re.compile(r"(?<= )")


def approx_gpt2_tokens(text: str) -> int:
    """Roughly how many GPT-2 tokens ``text`` has, without downloading GPT-2.

    GPT-2's byte-level BPE spends about 2 tokens on a common Chinese character and
    about 1.3 on an English word. Good enough to size chunks like the reference
    chapter did (its "1024 tokens" ≈ 470 Chinese characters).

    >>> approx_gpt2_tokens("你好")
    4
    """
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"
              or "\u3000" <= ch <= "\u303f")
    rest = re.sub(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]", " ", text)
    words = len(re.findall(r"\w+|[^\w\s]", rest))
    return 2 * cjk + round(1.3 * words)


class SentenceSplitter:
    """Split text at sentence ends into chunks of at most ``chunk_size`` (by ``length_fn``).

    Usable as a node-group transform: ``doc.create_node_group("chunks",
    transform=SentenceSplitter, chunk_size=256, chunk_overlap=25)``.
    """

    def __init__(self, chunk_size: int = 1024, chunk_overlap: int = 100,
                 length_fn: Callable[[str], int] = len) -> None:
        chunk_size = check_int(chunk_size, "chunk_size", low=1)
        chunk_overlap = check_int(chunk_overlap, "chunk_overlap", 0, chunk_size - 1,
                                  allowed=f"in [0, chunk_size={chunk_size})")
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.length_fn = length_fn

    def __call__(self, node: DocNode | str) -> list[str]:
        text = node.text if isinstance(node, DocNode) else node
        return self.split_text(text)

    def split_text(self, text: str) -> list[str]:
        pieces = self._pieces(text)
        chunks: list[str] = []
        current: list[str] = []
        for piece in pieces:
            if current and self.length_fn("".join(current) + piece) > self.chunk_size:
                chunks.append("".join(current))
                current = self._overlap_tail(current)
                # Drop overlap that would not leave room for the new piece.
                while current and self.length_fn("".join(current) + piece) > self.chunk_size:
                    current.pop(0)
            current.append(piece)
        if current:
            chunks.append("".join(current))
        return [chunk.strip() for chunk in chunks if chunk.strip()]

    def _overlap_tail(self, pieces: list[str]) -> list[str]:
        tail: list[str] = []
        for piece in reversed(pieces):
            if self.length_fn("".join([piece, *tail])) > self.chunk_overlap:
                break
            tail.insert(0, piece)
        return tail

    def _pieces(self, text: str) -> list[str]:
        """Sentences, each no longer than a chunk (long ones cut at spaces, then characters)."""
        pieces: list[str] = []
        for sentence in _split_keep(_SENTENCE_END, text):
            for part in _split_keep(_EN_SENTENCE_END, sentence):
                pieces.extend(self._fit(part))
        return pieces

    def _fit(self, piece: str, boundaries: tuple[re.Pattern[str], ...] = (_CLAUSE_END, _SPACE)
             ) -> list[str]:
        """Cut ``piece`` to chunk size at the first kind of boundary it has, else by characters."""
        if self.length_fn(piece) <= self.chunk_size:
            return [piece]
        level = next((i for i, boundary in enumerate(boundaries)
                      if len(_split_keep(boundary, piece)) > 1), len(boundaries))
        # No boundary at all (a long unbroken run, e.g. CJK text): cut between characters.
        parts = _split_keep(boundaries[level], piece) if level < len(boundaries) else list(piece)
        out: list[str] = []
        current = ""
        for part in parts:
            if current and self.length_fn(current + part) > self.chunk_size:
                out.extend(self._fit(current, boundaries[level + 1:]))
                current = ""
            current += part
        if current:
            out.extend(self._fit(current, boundaries[level + 1:]))
        return out


def _split_keep(pattern: re.Pattern[str], text: str) -> list[str]:
    return [part for part in pattern.split(text) if part]


def split_paragraphs(text: str) -> list[str]:
    """One node per line: the CMRC knowledge base joins its paragraphs with ``\\n``.

    >>> split_paragraphs("第一段。\\n\\n第二段。")
    ['第一段。', '第二段。']
    """
    return [line.strip() for line in text.split("\n") if line.strip()]
