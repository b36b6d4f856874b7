"""The index layer: every index keeps one contract, and a Document holds no cache dict."""


import numpy as np
import pytest
from bad_inputs import (
    EMPTY_GROUP,
    Case,
    clear_error_test,
    ret_doc,
)

from course_lib import DocNode, Document, Retriever
from course_lib.bm25 import BM25Index
from course_lib.index import GroupIndex, ScanIndex
from course_lib.ranking import rounded
from course_lib.similarity import Similarity, get_similarity
from course_lib.vectors import DenseVectors, SparseVectors


def stable_full_sort(scores, k, eligible):
    """What every index's search must return: eligible positions by score, ties by position."""
    candidates = np.flatnonzero(eligible)
    return candidates[np.argsort(-scores[candidates], kind="stable")][:k].tolist()


def tied_indexes(rng, n):
    """Indexes over items with many equal scores (small integers), and their full scores."""
    words = [[f"w{j}" for j in rng.integers(0, 3, size=2)] for _ in range(n)]
    dense = rng.integers(0, 3, size=(n, 4)).astype(np.float32)
    sparse = [{int(j): 1.0 for j in rng.integers(0, 4, size=2)} for _ in range(n)]
    bm25 = BM25Index(words)
    shared = Similarity("shared", lambda q, node: len(set(q) & set(node.text)), min_score=0.0)
    nodes = [DocNode("".join(w)) for w in words]
    query_vector, query_sparse = np.ones(4, dtype=np.float32), {0: 1.0, 1: 1.0}
    return [
        ("bm25", bm25, ["w0", "w1"], bm25.scores(["w0", "w1"]), 0.0),
        ("faiss", DenseVectors(dense, "dot", "faiss"), query_vector, dense @ query_vector, None),
        ("numpy", DenseVectors(dense, "dot", "numpy"), query_vector, dense @ query_vector, None),
        ("sparse", SparseVectors(sparse, "dot"), query_sparse,
         SparseVectors(sparse, "dot").scores(query_sparse), None),
        ("scan", ScanIndex(shared, nodes), "w0", shared.scores("w0", nodes), 0.0),
    ]


@pytest.mark.parametrize("seed", range(20))
def test_every_index_returns_a_stable_full_sort(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    for name, index, query, scores, min_score in tied_indexes(rng, n):
        matching = np.isfinite(scores) if min_score is None else scores > min_score
        for k in (1, 3, n, n + 5):
            for mask in (None, rng.random(n) > 0.3):
                eligible = matching if mask is None else matching & mask
                ids, got = index.search(query, k, mask)
                assert ids.tolist() == stable_full_sort(scores, k, eligible), (name, k)
                np.testing.assert_allclose(got, scores[ids], err_msg=name)
                assert ids.dtype.kind == "i" and got.dtype == np.float64, name


def test_faiss_ties_at_the_kth_place_go_to_the_earlier_vectors():
    """faiss orders equal scores arbitrarily; search widens its fetch until the k-th
    place is not tied, so the first equal vectors win on every machine."""
    rng = np.random.default_rng(0)  # cosines that differ only below the rounding: ties
    tiny = rng.uniform(0, 1e-3, 50)
    vectors = np.array([[0.0, 1.0]] + [[1.0, e] for e in tiny], dtype=np.float32)
    ids, scores = DenseVectors(vectors, "cosine", "faiss").search(np.array([1.0, 0.0]), 3)
    assert ids.tolist() == [1, 2, 3] and rounded(scores).tolist() == [1.0, 1.0, 1.0]
    # (without the widening faiss returns its raw best, [2, 3, 4], here)


def test_a_document_holds_indexes_not_a_cache_dict():
    doc = Document(texts={"a.txt": "猫喜欢鱼。\n狗喜欢骨头。"},
                   embed={"len": lambda texts: [[len(t), 1.0] for t in texts]})
    doc.create_node_group("line", transform=lambda t: t.split("\n"))
    assert not hasattr(doc, "cache_for") and not hasattr(doc, "embeddings")
    index = doc.index("line")
    assert isinstance(index, GroupIndex) and index is doc.index("line")
    Retriever(doc, "line", "bm25_chinese")("狗")
    Retriever(doc, "line", "cosine", index="numpy")("狗")
    assert sorted(index.bm25) == ["bm25_chinese"]
    assert index.vectors["len"].shape == (2, 2)
    assert list(index.vector_indexes) == [("len", "cosine", "numpy")]
    with pytest.raises(ValueError, match="unknown node group 'nope'"):
        doc.index("nope")


def test_search_checks_the_query_vector_dimension():
    doc = Document(texts=["甲", "乙"], embed=lambda texts: [[1.0, 0.0, 0.0] for _ in texts])
    index = doc.index("root")
    index.embeddings("default")
    doc.embed["default"] = lambda texts: [[1.0, 0.0] for _ in texts]
    with pytest.raises(ValueError, match="query vector has dimension 2 but the nodes' "
                                         "vectors have 3"):
        index.search(get_similarity("cosine"), "甲", 1, key="default")


def test_from_nodes_rebuilds_the_tree_and_rejects_a_wrong_one():
    root = DocNode("第一段。\n第二段。", group="root", uid="a.txt")
    nodes = [root] + [DocNode(text, group="paragraph", uid=f"a.txt/p[{i}]", parent=root)
                      for i, text in enumerate(root.text.split("\n"))]
    copy = Document.from_nodes(nodes, {"paragraph": "root"})
    assert [n.text for n in copy.get_nodes("paragraph")] == ["第一段。", "第二段。"]
    assert copy.find("root")(copy.get_nodes("paragraph"))[0].uid == "a.txt"
    assert len(copy.get_nodes("FineChunk")) == 1  # built-in groups still build from the roots
    with pytest.raises(ValueError, match="unknown parent or a cycle"):
        Document.from_nodes(nodes, {"paragraph": "section"})
    with pytest.raises(ValueError, match="group 'paragraph', which parents= does not name"):
        Document.from_nodes(nodes, {})


def test_a_bm25_score_that_rounds_to_zero_is_not_a_match():
    """BM25's rule (min_score 0) is applied to rounded scores, as for every similarity."""
    index = BM25Index([["a"], ["b"]])
    index.matrix.data[:] = [4e-7, 0.5]  # document 0's weight rounds to 0.0
    ids, _ = index.search(["a", "b"], 5)
    assert ids.tolist() == [1]


# ==================================================================== bad inputs
# The index layer names an empty group as clearly as the Retriever does.

INDEX_CASES: list[Case] = [Case("retrieval", *c) for c in [
    ("empty-group-index-layer",
     lambda t: ret_doc().index("nothing").search(get_similarity("bm25"), "长城", 3),
     ValueError, EMPTY_GROUP),
]]


test_bad_input_gets_a_clear_error = clear_error_test(INDEX_CASES)
