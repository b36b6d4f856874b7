"""Tests of course_lib.similarity, the registry of similarities: the built-in names its
docstring lists exist with the right mode, register_similarity and register_bm25 add one
that scores, and asking for an unknown name is a ValueError listing the known ones."""

import re

import numpy as np
import pytest

import course_lib.similarity as similarity
from course_lib.node import DocNode
from course_lib.similarity import (
    BUILTIN,
    SIMILARITIES,
    BM25Similarity,
    Similarity,
    VectorSimilarity,
    get_similarity,
    register_bm25,
    register_similarity,
)

DOCUMENTED = ["bm25", "bm25_chinese", "bm25_lazyllm", "bm25_char", "bm25_chinese_norm",
              "bm25_char_norm", "cosine", "dot"]
NODES = [DocNode("长城东起山海关。", uid="a"), DocNode("北京有故宫。", uid="b"),
         DocNode("龙井是绿茶。", uid="c")]


@pytest.fixture
def registered():
    """Names registered by a test, removed from the registry afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        SIMILARITIES.pop(name, None)


def test_every_name_in_the_module_docstring_is_registered_and_built_in():
    named = re.findall(r"``([a-z0-9_]+)``", similarity.__doc__)
    assert named == DOCUMENTED
    assert BUILTIN == frozenset(DOCUMENTED)
    for name in DOCUMENTED:
        found = get_similarity(name)
        assert isinstance(found, Similarity) and found.name == name


@pytest.mark.parametrize("name", [n for n in DOCUMENTED if n.startswith("bm25")])
def test_the_bm25_similarities_work_on_text_and_drop_nodes_sharing_nothing(name):
    bm25 = get_similarity(name)
    assert isinstance(bm25, BM25Similarity)
    assert bm25.mode == "text" and bm25.batch and bm25.min_score == 0.0
    query = "great wall" if name == "bm25" else "长城在哪里"
    nodes = [DocNode("The Great Wall is long. 长城很长。", uid="x"), DocNode("龙井 tea", uid="y")]
    scores = bm25.scores(query, nodes)
    assert scores.shape == (2,) and scores[0] > bm25.min_score >= scores[1]


def test_cosine_and_dot_work_on_dense_vectors():
    vectors = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    query = np.array([1.0, 0.0])
    for name in ("cosine", "dot"):
        assert isinstance(get_similarity(name), VectorSimilarity)
        assert get_similarity(name).mode == "embedding"
    assert get_similarity("cosine").scores(query, vectors) == pytest.approx([1.0, 0.0, 0.5 ** 0.5])
    assert get_similarity("dot").scores(query, vectors) == pytest.approx([1.0, 0.0, 3.0])


def test_on_sparse_vectors_a_node_sharing_no_term_is_no_match():
    scores = get_similarity("dot").scores({"长城": 1.0}, [{"长城": 2.0}, {"故宫": 1.0}])
    assert scores[0] == 2.0 and scores[1] == -np.inf


def test_register_similarity_without_parentheses_takes_the_functions_name(registered):
    def shared_characters_test(query, node):
        return len(set(query) & set(node.text)) / len(set(query))

    registered.append("shared_characters_test")
    assert register_similarity(shared_characters_test) is shared_characters_test
    found = get_similarity("shared_characters_test")
    assert found.fn is shared_characters_test and found.mode == "text" and not found.batch
    assert list(found.scores("长城", NODES)) == [1.0, 0.0, 0.0]


def test_a_registered_batch_similarity_gets_all_items_at_once(registered):
    calls = []

    @register_similarity(mode="embedding", batch=True, name="first_column_test")
    def first_column(query, matrix):
        calls.append(len(matrix))
        return matrix[:, 0] * query[0]

    registered.append("first_column_test")
    assert first_column.__name__ == "first_column"  # the decorator gives the function back
    found = get_similarity("first_column_test")
    scores = found.scores(np.array([2.0, 0.0]), np.array([[1.0, 5.0], [3.0, 0.0]]))
    assert list(scores) == [2.0, 6.0] and calls == [2]
    assert found.mode == "embedding" and found.batch


def test_a_registered_similarity_keeps_every_node_by_default(registered):
    register_similarity(lambda query, node: 0.0, name="always_zero_test")
    registered.append("always_zero_test")
    assert get_similarity("always_zero_test").min_score == float("-inf")


def test_register_bm25_adds_a_usable_bm25_over_the_tokeniser(registered):
    register_bm25("bm25_chars_only_test", lambda text: [ch for ch in text if ch.strip()])
    registered.append("bm25_chars_only_test")
    found = get_similarity("bm25_chars_only_test")
    assert isinstance(found, BM25Similarity) and found.min_score == 0.0
    scores = found.scores("城关", NODES)  # no word of jieba's, only characters
    assert scores[0] > 0 and scores[1] == scores[2] == 0.0


def test_register_bm25_passes_its_arguments_to_the_index(registered):
    register_bm25("bm25_no_length_test", list, b=0.0)
    registered.append("bm25_no_length_test")
    index = get_similarity("bm25_no_length_test").build(["ab", "abcdef"])
    assert index.b == 0.0
    # b=0: a document's length does not matter, so the same term count scores the same
    scores = get_similarity("bm25_no_length_test").scores(
        "a", [DocNode("ab", uid="1"), DocNode("abcdefgh", uid="2")])
    assert scores[0] == pytest.approx(scores[1])


def test_a_registered_name_is_listed_in_the_unknown_name_error(registered):
    register_bm25("bm25_listed_test", str.split)
    registered.append("bm25_listed_test")
    with pytest.raises(ValueError) as caught:
        get_similarity("bm25_listed")
    assert "'bm25_listed_test'" in str(caught.value)


@pytest.mark.parametrize("name", ["BM25", "cosine ", "", "bm25-chinese"])
def test_an_unknown_name_is_a_value_error_naming_every_known_one(name):
    with pytest.raises(ValueError) as caught:
        get_similarity(name)
    message = str(caught.value)
    assert message.startswith(f"unknown similarity {name!r}; choose one of ")
    assert str(sorted(SIMILARITIES)) in message
    assert "register_similarity() your own" in message


def test_a_name_that_is_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="got tuple"):
        get_similarity(("bm25",))
    with pytest.raises(TypeError, match="a str"):
        get_similarity(get_similarity("bm25"))  # a Similarity object, not its name
