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
