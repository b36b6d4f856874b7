"""Library v3: each rule written once. The one sentence splitter reproduces, on random
strings, each rule the course used before (the notebooks' numbers depend on them), and
one plain embedding function works in every component that takes an embedder."""

import random
import re

import numpy as np
import pytest

from course_lib.answerability import SIGNALS, AnswerabilityDetector
from course_lib.coverage import coverage, covered_terms
from course_lib.document import Document
from course_lib.index import FunctionEmbedder, as_embedder
from course_lib.metrics import context_sentences
from course_lib.node import DocNode
from course_lib.rerank import FeatureReranker, Reranker, candidate_sentences
from course_lib.retriever import Retriever
from course_lib.text_splitter import _split_keep, split_sentences

# The four splitters the course had before v3, verbatim.
_OFFLINE = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")
_RERANK = re.compile(r"(?<=[。！？!?])|(?<=\. )")
_CHUNK_SENTENCE, _CHUNK_ENGLISH = re.compile(r"(?<=[。！？!?；;\n])"), re.compile(r"(?<=[.!?] )")


def _old_rules(text):
    return ([s.strip() for s in _OFFLINE.split(text) if s and s.strip()],
            tuple(s.strip() for s in _RERANK.split(text) if s.strip()) or (text,),
            [p for s in _split_keep(_CHUNK_SENTENCE, text) for p in _split_keep(_CHUNK_ENGLISH, s)],
            [s.strip() for s in re.split("。+", text) if s.strip()],
            [s.strip() for s in re.split(r"\.+", text) if s.strip()])


def test_the_one_splitter_reproduces_every_earlier_rule():
    rng = random.Random(0)
    alphabet = list("ab。！？!?；;.\n \t\u3000\xa0")
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        new = (split_sentences(text), candidate_sentences(text),
               split_sentences(text, full_stop="space", strip=False),
               context_sentences([text]), context_sentences([text], "."))
        assert new == _old_rules(text), repr(text)


def test_the_splitter_keeps_every_character_when_asked():
    text = "长城很长。 It is 3.14 km. 真的！\n\n对；"
    assert "".join(split_sentences(text, strip=False)) == text
    with pytest.raises(ValueError, match="full_stop must be one of"):
        split_sentences(text, full_stop="dot")


def test_coverage_weights_and_matches_as_named():
    assert coverage([], "任何") == 0.0
    assert coverage(["长城"], "万里长城", match="substring") == 1.0
    assert coverage(["长城"], {"万里长城"}) == 0.0  # a token must be a whole token
    assert coverage(["a", "b"], {"a"}, weights={"a": 3.0, "b": 1.0}) == 0.75
    assert covered_terms(["ABC", "x"], "abc", match="substring") == []  # terms are lower-case
    with pytest.raises(ValueError, match="match must be one of"):
        coverage(["a"], "a", match="regex")


def _lengths(texts):
    """A plain embedding function: no object, no embed_query."""
    return np.array([[len(t), t.count("长城") + 1.0, 1.0] for t in texts], dtype=np.float32)


def test_one_plain_function_is_an_embedder_everywhere():
    assert isinstance(as_embedder(_lengths), FunctionEmbedder)
    assert as_embedder(as_embedder(_lengths)).function is _lengths
    np.testing.assert_array_equal(as_embedder(_lengths).embed_query("长城"), _lengths(["长城"])[0])
    texts = ["长城东起山海关。", "故宫在北京。", "长城西至嘉峪关。长城很长。"]

    doc = Document(texts={"a.txt": "\n".join(texts)}, embed=_lengths)
    doc.create_node_group("line", transform=lambda t: t.split("\n"))
    found = Retriever(doc, "line", "cosine", topk=1)("长城在哪里？")
    assert len(found) == 1

    nodes = [DocNode(t, uid=str(i)) for i, t in enumerate(texts)]
    reranker = FeatureReranker(embedder=_lengths)
    assert np.isfinite(reranker("长城在哪里？", texts)).all()
    assert "dense" in reranker.features("长城在哪里？", texts)
    ranked = Reranker(model=reranker, topk=2)("长城在哪里？", nodes)
    assert len(ranked) == 2

    detector = AnswerabilityDetector(texts, embedder=_lengths)
    values = detector.signals("长城在哪里？", nodes).values
    assert set(values) == set(SIGNALS)
    assert -1.0 <= values["best_sentence"] <= 1.0


def test_what_is_no_embedder_is_named():
    with pytest.raises(TypeError, match="an embedder must be"):
        as_embedder(42)
