import pytest

from course_lib import DocNode
from course_lib.fusion import MultiRetriever, parallel, pipeline, reciprocal_rank_fusion, union


def nodes(*uids, scores=None):
    return [DocNode(u, uid=u).with_score(s) for u, s in zip(uids, scores or [1.0] * len(uids),
                                                             strict=True)]


def test_union_dedupes_keeps_order_and_best_score():
    merged = union([nodes("a", "b", scores=[3.0, 2.0]), nodes("b", "c", scores=[5.0, 1.0])])
    assert [(n.uid, n.score) for n in merged] == [("a", 3.0), ("b", 5.0), ("c", 1.0)]


def test_rrf_formula():
    fused = reciprocal_rank_fusion([nodes("a", "b"), nodes("b", "c")], k=60)
    assert [n.uid for n in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61, abs=1e-6)  # scores carry 6 decimals
    assert fused[1].score == pytest.approx(1 / 61, abs=1e-6)
    assert reciprocal_rank_fusion([nodes("a", "b")], topk=1)[0].uid == "a"
    with pytest.raises(ValueError, match="k must be"):
        reciprocal_rank_fusion([], k=-1)


@pytest.mark.parametrize("workers", [0, 2])
def test_multi_retriever_records_paths(workers):
    paths = {"one": lambda q: nodes("a", "b"), "two": lambda q: nodes("c", "a")}
    merged = MultiRetriever(paths, max_workers=workers)("q")
    assert [n.uid for n in merged] == ["a", "b", "c"]
    assert merged[0].found_by == {"one": 1, "two": 2}
    assert MultiRetriever(paths, fusion="rrf", topk=1)("q")[0].uid == "a"
    with pytest.raises(ValueError, match="fusion"):
        MultiRetriever(paths, fusion="max")
    with pytest.raises(ValueError, match="paths is empty"):
        MultiRetriever({})


def test_pipeline_and_parallel_sum():
    assert pipeline(str.strip, str.upper)("  ab ") == "AB"
    assert parallel(len, str.upper)("ab") == (2, "AB")
    assert parallel(lambda q: [1], lambda q: [2, 3]).sum("q") == [1, 2, 3]


def test_multi_retriever_names_a_path_that_returns_no_list():
    paths = {"good": lambda q: nodes("a"), "broken": lambda q: None}
    with pytest.raises(TypeError, match=r"retrieval path 'broken' \(#2, .*returned None; "
                                        r"a path must return a list of DocNodes"):
        MultiRetriever(paths)("q")
    with pytest.raises(TypeError, match=r"item \[1\] is 123 \(int\), not a DocNode"):
        MultiRetriever({"p": lambda q: [*nodes("a"), 123]}, max_workers=2)("q")
    with pytest.raises(ValueError, match=r"topk must be an integer in \[1, 10000\], got 0"):
        MultiRetriever({"p": lambda q: nodes("a")}, topk=0)


def test_an_error_inside_a_path_keeps_its_type_and_says_which_path():
    def fails(query):
        raise KeyError("no index")

    with pytest.raises(KeyError) as raised:
        MultiRetriever({"bm25": fails})("q")
    assert "(raised in retrieval path 'bm25')" in raised.value.__notes__


def test_found_by_keeps_each_paths_best_rank():
    merged = MultiRetriever({"one": lambda q: nodes("a", "b", "a")})("q")
    assert [(n.uid, n.found_by) for n in merged] == [("a", {"one": 1}), ("b", {"one": 2})]
