import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bad_inputs import (
    EMPTY_GROUP,
    TOPK,
    Case,
    clear_error_test,
    ret_doc,
)

from course_lib import (
    Document,
    Retriever,
    load_sample,
    register_similarity,
    split_paragraphs,
)
from course_lib._support.validation import MAX_QUERY_CHARS
from course_lib.similarity import SIMILARITIES, get_similarity


@pytest.fixture()
def sample_doc():
    texts, questions = load_sample()
    doc = Document(texts=texts)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    return doc, questions


def test_results_are_sorted_scored_and_find_the_gold_paragraph(sample_doc):
    doc, questions = sample_doc
    found_first = 0
    for q in questions:
        similarity = "bm25_chinese" if q["file_name"].endswith(".txt") and \
            not q["file_name"].startswith("python") else "bm25"
        results = Retriever(doc, "paragraph", similarity, topk=3)(q["question"])
        scores = [n.score for n in results]
        assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
        found_first += results[0].text == q["paragraph"]
    assert found_first >= len(questions) - 1


def test_zero_score_nodes_are_not_padded(sample_doc):
    doc, _ = sample_doc
    results = Retriever(doc, "paragraph", "bm25", topk=10)("chloroplasts")
    assert len(results) == 1 and "chloroplasts" in results[0].text


def test_stored_nodes_are_not_mutated(sample_doc):
    doc, _ = sample_doc
    Retriever(doc, "paragraph", "bm25_chinese")("长城")
    assert all(n.score is None for n in doc.get_nodes("paragraph"))


def test_filters_and_cut_off(sample_doc):
    doc, _ = sample_doc
    query = "中国第一次举办奥运会 长城 茶"
    only_tea = Retriever(doc, "paragraph", "bm25_chinese", filters={"file_name": ["tea.txt"]})
    assert {n.metadata["file_name"] for n in only_tea(query)} == {"tea.txt"}
    everything = Retriever(doc, "paragraph", "bm25_chinese", topk=10)(query)
    cut = everything[1].score
    kept = Retriever(doc, "paragraph", "bm25_chinese", topk=10, similarity_cut_off=cut)(query)
    assert [n.uid for n in kept] == [everything[0].uid]  # strictly above the cut-off
    empty = Retriever(doc, "paragraph", "bm25_chinese", similarity_cut_off=1e9)(query)
    assert empty == []


@pytest.mark.parametrize("kwargs,error,message", [
    ({"topk": 0}, ValueError, r"topk must be an integer in \[1, 10000\], got 0"),
    ({"topk": 10001}, ValueError, "topk"),
    ({"topk": 2.0}, ValueError, "topk"),
    ({"group_name": "Nope"}, ValueError, "unknown node group"),
    ({"similarity": "nope"}, ValueError, "unknown similarity"),
    ({"filters": {"file_name": "tea.txt"}}, TypeError, "list of allowed values"),
    ({"similarity_cut_off": "0.5"}, ValueError, "similarity_cut_off"),
    ({"similarity_cut_off": float("nan")}, ValueError, "similarity_cut_off"),
    ({"embed_keys": ["x"]}, ValueError, "embed_keys only apply"),
    ({"similarity": "cosine"}, ValueError, "needs vectors"),
])
def test_bad_arguments(sample_doc, kwargs, error, message):
    doc, _ = sample_doc
    args = {"group_name": "paragraph", **kwargs}
    with pytest.raises(error, match=message):
        Retriever(doc, **args)


@pytest.mark.parametrize("query,error", [("", ValueError), ("   ", ValueError),
                                         (None, TypeError), ("x" * 1_000_001, ValueError)])
def test_bad_queries(sample_doc, query, error):
    doc, _ = sample_doc
    with pytest.raises(error, match="query"):
        Retriever(doc, "paragraph")(query)


def test_topk_larger_than_corpus_returns_what_exists(sample_doc):
    doc, _ = sample_doc
    # Every paragraph that names 长城, no padding up to topk.
    assert len(Retriever(doc, "paragraph", "bm25_chinese", topk=10000)("长城")) == 3


def test_registered_text_similarities_batch_and_single(sample_doc):
    doc, _ = sample_doc

    @register_similarity(mode="text", batch=False, name="shared_chars_test")
    def shared_chars(query, node):
        return len(set(query) & set(node.text)) / len(set(query))

    @register_similarity(mode="text", batch=True, name="shared_chars_batch_test")
    def shared_chars_batch(query, nodes):
        return [shared_chars(query, n) for n in nodes]

    try:
        one = Retriever(doc, "paragraph", "shared_chars_test", topk=3)("普洱属于哪一类茶")
        many = Retriever(doc, "paragraph", "shared_chars_batch_test", topk=3)("普洱属于哪一类茶")
        assert [n.uid for n in one] == [n.uid for n in many]
        assert "普洱" in one[0].text
    finally:
        SIMILARITIES.pop("shared_chars_test")
        SIMILARITIES.pop("shared_chars_batch_test")


def test_similarity_returning_nan_or_wrong_length_is_an_error(sample_doc):
    doc, _ = sample_doc
    register_similarity(lambda q, nodes: [float("nan")] * len(nodes), batch=True, name="nan_t")
    register_similarity(lambda q, nodes: [1.0], batch=True, name="short_t")
    try:
        with pytest.raises(ValueError, match="NaN"):
            Retriever(doc, "paragraph", "nan_t")("长城")
        with pytest.raises(ValueError, match="returned 1 scores"):
            Retriever(doc, "paragraph", "short_t")("长城")
    finally:
        SIMILARITIES.pop("nan_t")
        SIMILARITIES.pop("short_t")


def test_register_similarity_rejects_bad_modes_and_builtin_names():
    with pytest.raises(ValueError, match="mode"):
        register_similarity(len, mode="sparse")
    with pytest.raises(ValueError, match="built-in"):
        register_similarity(len, name="bm25")
    assert get_similarity("cosine").mode == "embedding"


def char_vectors(texts, alphabet="长城茶奥运光Python"):
    """A real (if crude) embedding: counts of a few characters, plus one for safety."""
    return np.array([[t.count(ch) for ch in alphabet] + [1] for t in texts], dtype=float)


def test_embedding_mode_with_cosine_and_several_keys(sample_doc):
    texts, _ = load_sample()
    doc = Document(texts=texts, embed={"chars": char_vectors,
                                       "length": lambda ts: [[len(t), 1.0] for t in ts]})
    doc.create_node_group("paragraph", transform=split_paragraphs)
    results = Retriever(doc, "paragraph", "cosine", topk=2, embed_keys=["chars"])("长城长城")
    assert all("长城" in n.text for n in results)
    assert results[0].score >= results[1].score
    both = Retriever(doc, "paragraph", "cosine", topk=2)("长城长城")
    assert len({n.uid for n in both}) == len(both) <= 4
    assert [n.score for n in both] == sorted((n.score for n in both), reverse=True)
    node = doc.get_nodes("paragraph")[0]
    assert set(node.embeddings) == {"chars", "length"}
    per_key = Retriever(doc, "paragraph", "cosine", topk=5, embed_keys=["chars"],
                        similarity_cut_off={"chars": 0.99})("长城长城")
    assert all(n.score > 0.99 for n in per_key)
    with pytest.raises(ValueError, match="unknown embed key"):
        Retriever(doc, "paragraph", "cosine", embed_keys=["nope"])
    with pytest.raises(ValueError, match="unknown embed key"):
        Retriever(doc, "paragraph", "cosine", similarity_cut_off={"nope": 0.1})


def test_embedding_dimension_mismatch_and_zero_vectors():
    calls = {"n": 0}

    def shifty(texts):
        calls["n"] += 1
        return np.ones((len(texts), 3 if calls["n"] == 1 else 4))

    doc = Document(texts=["甲", "乙"], embed=shifty)
    with pytest.raises(ValueError, match="dimension"):
        Retriever(doc, "root", "cosine")("甲")
    zero = Document(texts=["甲"], embed=lambda ts: np.zeros((len(ts), 2)))
    with pytest.raises(ValueError, match="zero vector"):
        Retriever(zero, "root", "cosine")("甲")
    wrong = Document(texts=["甲", "乙"], embed=lambda ts: np.ones((1, 2)))
    with pytest.raises(ValueError, match="shape"):
        Retriever(wrong, "root", "cosine")("甲")
    with pytest.raises(TypeError, match="embed must be"):
        Document(texts=["甲"], embed=42)


def test_register_bm25_with_own_tokeniser(sample_doc):
    from course_lib import register_bm25

    register_bm25("bm25_chars_test", lambda text: [ch for ch in text if ch.strip()])
    try:
        doc = sample_doc[0]
        results = Retriever(doc, "paragraph", "bm25_chars_test", topk=1)("菲尔普斯")
        assert "菲尔普斯" in results[0].text
        index = doc.index("paragraph").bm25["bm25_chars_test"]
        assert len(index) == len(doc.get_nodes("paragraph"))
        with pytest.raises(ValueError, match="built-in"):
            register_bm25("bm25", str.split)
    finally:
        SIMILARITIES.pop("bm25_chars_test")


def test_cut_off_sweep_equals_retrieving_with_the_cut_off(sample_doc):
    from course_lib.lab.data.datasets import Question
    from course_lib.lab.measure.evaluation import cut_off_sweep, score_rankings

    doc, questions = sample_doc
    qs = [Question(q["id"], q["question"], [q["answer"]], [0], q["id"], q["paragraph"])
          for q in questions]
    plain = Retriever(doc, "paragraph", "bm25_chinese", topk=5)
    rankings = [plain(q.question) for q in qs]
    for threshold in (0.0, 2.0, 5.0):
        cut = Retriever(doc, "paragraph", "bm25_chinese", topk=5, similarity_cut_off=threshold)
        expected = score_rankings(qs, [cut(q.question) for q in qs], ks=(5,))
        row = cut_off_sweep(qs, rankings, [threshold])[0]
        assert row["recall@5"] == expected["recall@5"]
        assert row["context_relevance@5"] == expected["context_relevance@5"]


# ==================================================================== bad inputs
# Retriever's arguments and queries: a wrong one is a clear error, not a silent [].

def _bm25(query: Any = "长城", **kwargs: Any) -> Callable[[Path], Any]:
    """Build a BM25 retriever over ``line`` with ``kwargs`` and ask it ``query``."""
    return lambda t: Retriever(ret_doc(), **{"group_name": "line",
                                              "similarity": "bm25_chinese", **kwargs})(query)


def _cosine(query: Any = "长城", **kwargs: Any) -> Callable[[Path], Any]:
    """The same through the dense (faiss) path."""
    return lambda t: Retriever(ret_doc(embed=True), **{"group_name": "line",
                                                        "similarity": "cosine", **kwargs})(query)


_SURROGATE_AT_2 = r"query holds a lone surrogate '\\ud800' at position 2, which is not valid"


_FILTER_KEY = (r"filters name metadata key\(s\) \['filename'\] that no node of group 'line' has "
               r"\(did you mean 'file_name'\?\); the keys its nodes have: \[.*'file_name'.*\]")
_SIMILARITY_TYPE = (r"similarity must be the name of a registered similarity \(a str\), one of "
                    r"\[.*'bm25_chinese'.*\]; got ")
_TOO_LONG = (rf"query has {MAX_QUERY_CHARS + 1:,} characters; the limit is {MAX_QUERY_CHARS:,} "
             r"\(MAX_QUERY_CHARS\), so that every retrieval path answers in bounded time and "
             r"memory .* ask with a shorter query")


RETRIEVAL_CASES: list[Case] = [Case("retrieval", *c) for c in [
    # -- filters: a typo is an error listing the keys, not a silent []
    ("filter-key-typo", _bm25(filters={"filename": ["a.txt"]}), ValueError, _FILTER_KEY),
    ("filter-key-typo-cosine", _cosine(filters={"filename": ["a.txt"]}), ValueError, _FILTER_KEY),
    ("filter-key-typo-group-already-built",  # checked when the retriever is made
     lambda t: Retriever(ret_doc(built=True), "line", filters={"filename": ["a.txt"]}),
     ValueError, _FILTER_KEY),
    ("filter-value-unhashable", _bm25(filters={"file_name": [["a.txt"]]}), TypeError,
     r"filters\['file_name'\] must be a list of hashable values \(strings, numbers, tuples\).*"
     r"item 0 is a list: \['a\.txt'\]"),
    ("filter-value-a-dict-inside", _bm25(filters={"file_name": ["a.txt", {"b": 1}]}), TypeError,
     r"filters\['file_name'\] must be a list of hashable values .* item 1 is a dict"),
    ("filters-not-a-dict", _bm25(filters=["file_name"]), TypeError,
     r"filters must be a dict like \{'file_name': \['a\.txt'\]\}, got list"),
    ("filter-value-a-string", _bm25(filters={"file_name": "a.txt"}), TypeError,
     r"filters\['file_name'\] must be a list of allowed values, e\.g\. \{'file_name': "
     r"\['a\.txt'\]\}, got 'a\.txt'"),
    # -- similarity: a registered name
    ("similarity-a-list", _bm25(similarity=["bm25"]), TypeError,
     _SIMILARITY_TYPE + r"list \['bm25'\]\. To combine several, .*MultiRetriever"),
    ("similarity-none", _bm25(similarity=None), TypeError, _SIMILARITY_TYPE + "NoneType None"),
    ("similarity-unknown", _bm25(similarity="bm26"), ValueError,
     r"unknown similarity 'bm26'; choose one of \[.*'bm25'.*\] or register_similarity"),
    # -- topk: an integer in [1, 10000] (numpy integers count: see the test below)
    ("topk-bool", _bm25(topk=True), ValueError, TOPK + "True"),
    ("topk-float", _bm25(topk=3.0), ValueError, TOPK + r"3\.0"),
    ("topk-zero", _bm25(topk=0), ValueError, TOPK + "0"),
    ("topk-too-big", _bm25(topk=10_001), ValueError, TOPK + "10001"),
    ("topk-negative-at-retrieve",
     lambda t: Retriever(ret_doc(), "line").retrieve("长城", topk=-1), ValueError, TOPK + "-1"),
    # -- cut-offs: a number, not NaN, per known embed key
    ("cut-off-nan", _bm25(similarity_cut_off=math.nan), ValueError,
     r"similarity_cut_off must be a number, got nan \(NaN compares false with everything\)"),
    ("cut-off-string", _bm25(similarity_cut_off="0.5"), ValueError,
     r"similarity_cut_off must be a number, got '0\.5'"),
    ("cut-off-dict-unknown-key", _cosine(similarity_cut_off={"other": 0.5}), ValueError,
     r"similarity_cut_off names unknown embed key\(s\) \['other'\]; this retriever uses "
     r"\['default'\]"),
    ("cut-off-dict-nan-value", _cosine(similarity_cut_off={"default": math.nan}), ValueError,
     r"similarity_cut_off\['default'\] must be a number, got nan"),
    # -- queries: the same refusal on every path
    ("query-lone-surrogate-bm25", _bm25("长城\ud800"), ValueError, _SURROGATE_AT_2),
    ("query-lone-surrogate-bm25-char", _bm25("长城\ud800", similarity="bm25_char"), ValueError,
     _SURROGATE_AT_2),
    ("query-lone-surrogate-cosine", _cosine("长城\ud800"), ValueError, _SURROGATE_AT_2),
    ("query-too-long-bm25", _bm25("长" * (MAX_QUERY_CHARS + 1)), ValueError, _TOO_LONG),
    ("query-too-long-cosine", _cosine("长" * (MAX_QUERY_CHARS + 1)), ValueError, _TOO_LONG),
    ("query-empty", _bm25(""), ValueError, r"query is empty: give the question to retrieve for"),
    ("query-whitespace", _cosine(" \n\t"), ValueError, r"query is empty: give the question"),
    ("query-a-list", _bm25(["长城"]), TypeError, r"query must be a string, got list"),
    ("query-bytes", _cosine("长城".encode()), TypeError, r"query must be a string, got bytes"),
    # -- a group with no nodes: one clear error on every path
    ("empty-group-bm25", _bm25(group_name="nothing"), ValueError, EMPTY_GROUP),
    ("empty-group-bm25-char", _bm25(group_name="nothing", similarity="bm25_char"), ValueError,
     EMPTY_GROUP),
    ("empty-group-cosine", _cosine(group_name="nothing"), ValueError, EMPTY_GROUP),
    ("empty-group-numpy-index", _cosine(group_name="nothing", index="numpy"), ValueError,
     EMPTY_GROUP),
    ("empty-group-already-built", lambda t: Retriever(ret_doc(built=True), "nothing"),
     ValueError, EMPTY_GROUP),
    # -- embed keys, indexes, groups
    ("embed-keys-unknown", _cosine(embed_keys=["nope"]), ValueError,
     r"unknown embed key\(s\) \['nope'\]; the document has \['default'\]"),
    ("embed-keys-a-string", _cosine(embed_keys="default"), TypeError,
     r"embed_keys must be a list of embed keys, e\.g\. \['default'\], got the string 'default'"),
    ("embed-keys-on-bm25", _bm25(embed_keys=["default"]), ValueError,
     r"embed_keys only apply to embedding similarities; 'bm25_chinese' works on text"),
    ("cosine-without-embed", _bm25(similarity="cosine"), ValueError,
     r"similarity 'cosine' needs vectors: create the Document with embed=\.\.\."),
    ("index-unknown", _cosine(index="faiss-gpu"), ValueError,
     r"index must be one of \('faiss', 'numpy', 'hnsw', 'milvus', 'map'\), got 'faiss-gpu'"),
    # -- index="map": a look-up by one key's exact value
    ("map-without-map-key", _bm25(index="map"), ValueError,
     r"index='map' looks nodes up by the exact value of one metadata key: give map_key="),
    ("map-key-without-map", _bm25(map_key="file_name"), ValueError,
     r"map_key= only applies to index='map' .* index='faiss' ranks by similarity"),
    ("map-key-not-a-string", _bm25(index="map", map_key=["file_name"]), TypeError,
     r"map_key must be a metadata key \(a non-empty string\), got \['file_name'\]"),
    ("map-key-typo", _bm25(index="map", map_key="filename"), ValueError,
     r"map_key 'filename' is in no node's metadata of group 'line' \(did you mean "
     r"'file_name'\?\); the keys its nodes have: \[.*\], or 'text'"),
    ("map-key-typo-group-already-built",
     lambda t: Retriever(ret_doc(built=True), "line", index="map", map_key="filename"),
     ValueError, r"map_key 'filename' is in no node's metadata of group 'line'"),
    ("map-with-cut-off", _bm25(index="map", map_key="text", similarity_cut_off=0.5), ValueError,
     r"similarity_cut_off does not apply to index='map': a look-up scores nothing"),
    ("map-with-embed-keys", _cosine(index="map", map_key="text", embed_keys=["default"]),
     ValueError, r"embed_keys do not apply to index='map': a look-up uses no vectors"),
    ("map-on-an-empty-group", _bm25(group_name="nothing", index="map", map_key="text"),
     ValueError, EMPTY_GROUP),
    ("index-milvus-without-store", _cosine(index="milvus"), ValueError,
     r"index='milvus' needs a vector store: Document\(\.\.\., store=MilvusStore\(\)\)"),
    ("group-unknown", _bm25(group_name="lines"), ValueError,
     r"unknown node group 'lines'; known groups: \[.*'line'.*\]"),
]]


test_bad_input_gets_a_clear_error = clear_error_test(RETRIEVAL_CASES)


@pytest.mark.parametrize("path", ["bm25_chinese", "bm25_char", "cosine"])
def test_retrieval_query_at_the_limit_and_numpy_topk_are_served(path: str) -> None:
    """The limit is inclusive, and ``topk=numpy.int64(2)`` is an integer like 2."""
    doc = ret_doc(embed=path == "cosine")
    retriever = Retriever(doc, "line", path, topk=np.int64(2))
    assert retriever.topk == 2 and type(retriever.topk) is int
    assert len(retriever("长城" * (MAX_QUERY_CHARS // 2))) <= 2


def test_retrieval_known_filter_keys_still_filter() -> None:
    """The key check does not change what a correct filter keeps."""
    retriever = Retriever(ret_doc(), "line", filters={"file_name": ["b.txt"]})
    assert [n.metadata["file_name"] for n in retriever("普洱 长城")] == ["b.txt"]


# ==================================================================== the query's path
# A query goes Retriever.__call__ → retrieve → GroupIndex.search → the index's own search,
# which scores: four frames, whatever the similarity. A fifth would be a layer nobody reads.
PATH_DEPTH = 4


def _frames_to_scoring(retriever: Retriever, index_class: type, query: str) -> list[str]:
    """The frames from ``Retriever.__call__`` down to ``index_class.search``, outermost first."""
    import inspect

    seen: list[str] = []
    search = index_class.search

    def spying(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not seen:
            names = [f"{frame.function} ({Path(frame.filename).name})"
                     for frame in inspect.stack()]
            end = names.index("__call__ (retriever.py)")
            seen.extend(reversed([f"search ({Path(inspect.getfile(search)).name})",
                                  *names[1:end + 1]]))
        return search(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_class, "search", spying)
        retriever(query)
    return seen


def _lengths(texts: list[str]) -> np.ndarray:
    return np.array([[len(t), t.count("长城") + 1.0, 1.0] for t in texts], dtype=np.float32)


@pytest.mark.parametrize("similarity", ["bm25_chinese", "cosine"])
def test_a_query_reaches_its_score_in_four_frames(similarity: str) -> None:
    from course_lib.bm25 import BM25Index
    from course_lib.vectors import DenseVectors

    doc = Document(texts={"a.txt": "长城东起山海关。\n故宫在北京。"}, embed=_lengths)
    doc.create_node_group("line", transform=lambda t: t.split("\n"))
    index_class = BM25Index if similarity.startswith("bm25") else DenseVectors
    frames = _frames_to_scoring(Retriever(doc, "line", similarity, topk=1), index_class,
                                "长城在哪里？")
    assert frames[0] == "__call__ (retriever.py)" and frames[-1].startswith("search (")
    assert len(frames) == PATH_DEPTH, frames
