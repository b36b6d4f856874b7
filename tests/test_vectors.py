import numpy as np
import pytest

from course_lib.vectors import DenseVectors, SparseVectors


@pytest.mark.parametrize("metric", ["cosine", "dot"])
def test_faiss_and_numpy_give_the_same_ranking(metric):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(500, 32))
    faiss_store = DenseVectors(vectors, metric=metric, backend="faiss")
    numpy_store = DenseVectors(vectors, metric=metric, backend="numpy")
    for query in rng.normal(size=(10, 32)):
        a, b = faiss_store.scores(query), numpy_store.scores(query)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        assert list(np.argsort(-a)[:20]) == list(np.argsort(-b)[:20])


def test_cosine_matches_the_formula():
    vectors = np.array([[3.0, 4.0], [1.0, 0.0], [-1.0, 1.0]])
    query = np.array([1.0, 1.0])
    expected = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    np.testing.assert_allclose(DenseVectors(vectors).scores(query), expected, atol=1e-6)


def test_bad_vectors_and_queries():
    with pytest.raises(ValueError, match="zero vector"):
        DenseVectors(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        DenseVectors(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="2-D"):
        DenseVectors(np.ones(3))
    with pytest.raises(ValueError, match="dimension 2"):
        DenseVectors(np.ones((2, 3))).scores(np.ones(2))
    with pytest.raises(ValueError, match="metric"):
        DenseVectors(np.ones((2, 3)), metric="l2")


def test_sparse_dot_cosine_and_no_match():
    store = SparseVectors([{1: 2.0, 2: 1.0}, {3: 1.0}, {1: 1.0}], metric="dot")
    scores = store.scores({1: 1.0, 9: 5.0})
    assert scores[0] == 2.0 and scores[2] == 1.0 and scores[1] == -np.inf
    cos = SparseVectors([{1: 2.0, 2: 1.0}, {3: 1.0}, {1: 1.0}], metric="cosine")
    np.testing.assert_allclose(cos.scores({1: 1.0})[[0, 2]], [2 / np.sqrt(5), 1.0])


def test_hnsw_recall_against_flat_and_search_api():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(5000, 32)).astype(np.float32)
    flat = DenseVectors(vectors, backend="faiss")
    hnsw = DenseVectors(vectors, backend="hnsw", ef_search=128)
    found = 0
    for query in rng.normal(size=(50, 32)):
        exact, _ = flat.search(query, 10)
        approx, scores = hnsw.search(query, 10)
        found += len(set(exact) & set(approx))
        assert list(scores) == sorted(scores, reverse=True)
    assert found / 500 >= 0.95
    full = hnsw.scores(rng.normal(size=32))
    assert np.isfinite(full).sum() == 128 and (full == -np.inf).sum() == 5000 - 128
    ids, _ = DenseVectors(vectors, backend="numpy").search(vectors[7], 3)
    assert ids[0] == 7
    with pytest.raises(ValueError, match="backend"):
        DenseVectors(vectors, backend="annoy")


def test_retriever_with_hnsw_index():
    from course_lib import Document, Retriever

    rng = np.random.default_rng(2)
    table = rng.normal(size=(300, 16))
    texts = [f"t{i}" for i in range(300)]
    lookup = dict(zip(texts, table, strict=True))
    doc = Document(texts=texts, embed=lambda ts: np.array([lookup.get(t, table[0]) for t in ts]))
    exact = Retriever(doc, "root", "cosine", topk=5)("t42")
    approx = Retriever(doc, "root", "cosine", topk=5, index="hnsw")("t42")
    assert exact[0].uid == approx[0].uid == "text_42"
    with pytest.raises(ValueError, match="index"):
        Retriever(doc, "root", "cosine", index="lsh")
