
import pytest
from bad_inputs import (
    NODES,
    PATH_MUST,
    TOPK,
    Case,
    all_nodes,
    clear_error_test,
)

from course_lib import DocNode
from course_lib.flow import INPUT, PREVIOUS, bind, parallel, pipeline
from course_lib.fusion import MultiRetriever, reciprocal_rank_fusion, union
from course_lib.rerank import Reranker


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



def test_bind_hands_a_later_step_the_pipelines_input():
    def retrieve(query):
        return nodes("长城很长", "西湖很美", "长城在北方")

    def overlap(query, texts):
        return [len(set(query) & set(text)) for text in texts]

    def prompt(context, query):
        return f"{context} | {query}"

    rerank = Reranker(model=overlap, topk=2, output_format="content", join="/")
    for chain in (pipeline(retrieve, bind(rerank, INPUT, PREVIOUS), bind(prompt, query=INPUT)),
                  pipeline(retrieve, rerank | bind(INPUT, PREVIOUS), prompt | bind(query=INPUT)),
                  pipeline(retrieve, rerank | bind(query=INPUT, nodes=PREVIOUS),
                           prompt | bind(query=INPUT))):
        assert chain("长城在哪") == "长城在北方/长城很长 | 长城在哪"
    # LazyLLM's step, | bind(query=ppl.input), hands our reranker the nodes first: refused
    with pytest.raises(TypeError, match=r"call reranker\(query, nodes\): the query comes first"):
        pipeline(retrieve, rerank | bind(query=INPUT))("长城在哪")
    # the Python-native equivalent: a function that keeps the question in a variable
    def by_hand(query):
        return prompt(rerank(query, retrieve(query)), query=query)
    assert by_hand("长城在哪") == chain("长城在哪")
    # positional, several values, and values that are not INPUT
    joined = pipeline(str.upper, bind(lambda text, a, b, sep: sep.join([text, a, b]),
                                      INPUT, "x", sep="-"))
    assert joined("ab") == "AB-ab-x"
    # nested: INPUT is the input of the pipeline that runs the step
    inner = pipeline(str.upper, bind(lambda text, original: text + original, original=INPUT))
    assert pipeline(str.strip, inner)("  ab ") == "ABab"
    assert bind(len, 0)  # binding a plain value is fine; called alone it needs no pipeline
    assert bind(lambda text, n: text * n, 2)("ab") == "abab"


def test_bind_and_pipeline_say_what_is_wrong():
    with pytest.raises(ValueError, match="bind needs something to bind"):
        bind(len)
    with pytest.raises(TypeError, match=r"bind\(<lambda>, query=INPUT\) uses INPUT, the input "
                                        r"of the pipeline it runs in: use it as a step"):
        bind(lambda nodes, query: nodes, query=INPUT)(["a"])
    with pytest.raises(TypeError, match="already has its stage len"):
        len | bind(len, query=INPUT)
    with pytest.raises(TypeError, match="only a callable can be bound: got int 3"):
        3 | bind(query=INPUT)
    with pytest.raises(TypeError, match=r"pipeline step #2 is bind\(<no stage>, query=INPUT\), "
                                        r"with no stage: write bind\(stage, ...\)"):
        pipeline(str.upper, bind(query=INPUT))
    with pytest.raises(TypeError, match=r"bind\(\.\.\.\) has no stage"):
        bind(query=INPUT).run("a", "a")
    with pytest.raises(TypeError, match="pipeline step #2 must be callable, got str 'x'"):
        pipeline(str.upper, "x")
    with pytest.raises(ValueError, match="pipeline needs at least one step"):
        pipeline()


def test_an_error_inside_a_pipeline_step_keeps_its_type_and_names_the_step():
    def broken(value, query):
        raise KeyError(query)

    with pytest.raises(KeyError) as caught:
        pipeline(str.upper, bind(broken, query=INPUT))("q")
    assert caught.value.__notes__ == ["(raised in pipeline step #2, bind(broken, query=INPUT))"]
    rerank_without_query = pipeline(lambda q: nodes("a"), Reranker(model=lambda q, t: [1.0]))
    with pytest.raises(TypeError, match="query") as caught:
        rerank_without_query("q")  # the mistake bind prevents: the reranker gets no query
    assert caught.value.__notes__ == ["(raised in pipeline step #2, Reranker)"]

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


# ==================================================================== bad inputs
# MultiRetriever, reciprocal rank fusion and union: bad arguments and bad paths.

FUSION_CASES: list[Case] = [
    # -- MultiRetriever
    Case("fusion", "multi-retriever-topk-minus-one",
         lambda tmp: MultiRetriever({"all": all_nodes}, topk=-1), ValueError, TOPK + "-1"),
    Case("fusion", "multi-retriever-topk-zero",
         lambda tmp: MultiRetriever({"all": all_nodes}, topk=0), ValueError, TOPK + "0"),
    Case("fusion", "multi-retriever-topk-bool",
         lambda tmp: MultiRetriever({"all": all_nodes}, topk=True), ValueError, TOPK + "True"),
    Case("fusion", "multi-retriever-path-returns-none",
         lambda tmp: MultiRetriever({"all": all_nodes, "qa": lambda q: None})("长城"),
         TypeError, r"retrieval path 'qa' \(#2, <function .*\) returned None; " + PATH_MUST),
    Case("fusion", "multi-retriever-path-returns-a-string",
         lambda tmp: MultiRetriever({"text": lambda q: "长城"}, max_workers=2)("长城"),
         TypeError, r"retrieval path 'text' \(#1, .*\) returned '长城' \(str\); " + PATH_MUST),
    Case("fusion", "multi-retriever-path-returns-ints",
         lambda tmp: MultiRetriever({"ids": lambda q: [123]})("长城"),
         TypeError, r"retrieval path 'ids' .* item \[0\] is 123 \(int\), not a DocNode; "
                    + PATH_MUST),
    Case("fusion", "multi-retriever-path-not-callable",
         lambda tmp: MultiRetriever({"bm25": "bm25_chinese"}),
         TypeError, r"retrieval path 'bm25' \(#1\) must be callable query -> list of DocNodes, "
                    r"got str"),
    Case("fusion", "multi-retriever-paths-a-list", lambda tmp: MultiRetriever([all_nodes]),
         TypeError, r"paths must be a dict name -> retriever, .* got list"),
    Case("fusion", "multi-retriever-no-paths", lambda tmp: MultiRetriever({}),
         ValueError, r"paths is empty: give at least one retriever"),
    Case("fusion", "multi-retriever-unknown-fusion",
         lambda tmp: MultiRetriever({"all": all_nodes}, fusion="max"),
         ValueError, r"fusion must be 'union' or 'rrf', got 'max'"),
    Case("fusion", "multi-retriever-negative-workers",
         lambda tmp: MultiRetriever({"all": all_nodes}, max_workers=-1),
         ValueError, r"max_workers must be an integer >= 0, got -1"),
    # -- reciprocal rank fusion and union
    Case("fusion", "rrf-negative-k", lambda tmp: reciprocal_rank_fusion([NODES], k=-1),
         ValueError, r"k must be a number >= 0, got -1"),
    Case("fusion", "rrf-nan-k", lambda tmp: reciprocal_rank_fusion([NODES], k=float("nan")),
         ValueError, r"k must be a number >= 0, got nan"),
    Case("fusion", "rrf-topk-zero", lambda tmp: reciprocal_rank_fusion([NODES], topk=0),
         ValueError, TOPK + "0"),
    Case("fusion", "rrf-topk-minus-one", lambda tmp: reciprocal_rank_fusion([NODES], topk=-1),
         ValueError, TOPK + "-1"),
    Case("fusion", "rrf-ranking-none", lambda tmp: reciprocal_rank_fusion([NODES, None]),
         TypeError, r"rankings\[1\] must be a list of DocNodes, got NoneType"),
    Case("fusion", "union-ranking-of-strings", lambda tmp: union([["长城"]]),
         TypeError, r"rankings\[0\]\[0\] must be a DocNode, got str"),
]


test_bad_input_gets_a_clear_error = clear_error_test(FUSION_CASES)
