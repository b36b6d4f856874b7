"""The chapter's final system (course_lib.lab.systems.chapter_system): what chapter_rag wires
together on a hand-made knowledge base — its three paths, the reranker, the QA path in its
three forms, the answerability option and the refusals (the reranker's preparation is
recorded instead of run, and a stand-in takes e5's place)."""

import numpy as np
import pytest

from course_lib.embedding_base import Embedder
from course_lib.lab.data import kb_document
from course_lib.lab.data.datasets import Question, SquadSet, build_knowledge_base
from course_lib.lab.systems import chapter_system as cs
from course_lib.lab.systems.chapter_system import chapter_rag
from course_lib.lab.systems.pipelines import WIDE
from course_lib.llm import OfflineLLM

TEA = "龙井属于绿茶。普洱属于黑茶。"
WALL = "长城东起山海关。长城西至嘉峪关。"


def tiny_kb():
    questions = [Question("q1", "普洱属于哪一类茶？", ["黑茶"], [TEA.index("黑茶")], "p1", TEA),
                 Question("q2", "长城西至哪里？", ["嘉峪关"], [WALL.index("嘉峪关")], "p2", WALL)]
    return build_knowledge_base(SquadSet([("p1", TEA), ("p2", WALL)], questions))


class Vectors(Embedder):
    """A stand-in for e5: two numbers per text."""

    name, dim = "stand-in", 2

    def _embed(self, texts):
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


@pytest.fixture
def wiring(monkeypatch):
    """Record the reranker's preparation and the models asked for; no model runs."""
    seen = {"prepared": [], "embed": []}

    class Features:
        def prepare(self, texts):
            seen["prepared"].append(list(texts))

        def __call__(self, query, texts):  # characters shared with the question
            return [float(len(set(query) & set(t))) for t in texts]

    def default_embedder(model="e5"):
        seen["embed"].append(model)
        return Vectors()

    monkeypatch.setattr(cs, "FeatureReranker", Features)
    monkeypatch.setattr(kb_document, "default_embedder", default_embedder)
    return seen


def test_three_paths_a_reranker_and_the_offline_qa_path(wiring):
    rag = chapter_rag(tiny_kb(), llm=OfflineLLM())
    paths = rag.retriever.paths
    assert list(paths) == ["bm25 words", "bm25 characters", "coarse chunks, cosine"]
    assert [(p.group_name, p.similarity.name, p.topk) for p in paths.values()] == [
        ("paragraph", "bm25_chinese", WIDE), ("paragraph", "bm25_char", WIDE),
        ("CoarseChunk", "cosine", 5)]
    assert wiring["embed"] == ["e5"]  # the document is embedded with e5
    chunks = [n.text for n in paths["coarse chunks, cosine"].doc.get_nodes("CoarseChunk")]
    assert wiring["prepared"] == [[TEA, WALL, *chunks]]
    assert (rag.reranker.topk, rag.context_size, rag.dedupe, rag.qa_parents) == (3, 3, False,
                                                                                 False)
    qa = rag.qa_path
    assert (qa.group_name, qa.similarity.name, qa.topk) == ("qapair", "bm25_chinese", 1)
    pairs = qa.doc.get_nodes("qapair")
    assert pairs and {n.parent.text for n in pairs} <= {TEA, WALL}  # written per paragraph
    assert rag.answerability is None
    answer = rag.ask("普洱属于哪一类茶？")
    assert answer.contexts[0].text == TEA and len(answer.contexts) <= 3


def test_stored_questions_make_the_qa_path_an_faq_with_parents(wiring):
    kb = tiny_kb()
    rag = chapter_rag(kb, llm=OfflineLLM(), qa_pairs=kb.questions[1:], dedupe=True,
                      context_size=2, score_cut_off=1.5)
    stored = rag.qa_path.doc.get_nodes("qapair")
    assert [(n.text, n.parent.text) for n in stored] == [("长城西至哪里？", WALL)]
    assert rag.qa_parents and rag.dedupe and rag.context_size == 2
    assert rag.reranker.topk is None  # with dedupe the reranker hands back every candidate
    assert wiring["embed"] == ["e5"]


def test_no_qa_path(wiring):
    rag = chapter_rag(tiny_kb(), llm=OfflineLLM(), qa_pairs=None, context_size=4)
    assert rag.qa_path is None and rag.reranker.topk == 4
    assert not rag.retriever.paths["bm25 words"].doc.get_nodes("paragraph")[0].children.get(
        "qapair")


@pytest.mark.parametrize("qa_pairs, message", [
    ([], "qa_pairs is an empty list"), ("faq", "qa_pairs must be 'offline', None or a list"),
    (["普洱属于哪一类茶？"], "qa_pairs must be 'offline', None or a list")])
def test_other_qa_pairs_are_refused(wiring, qa_pairs, message):
    with pytest.raises(ValueError, match=message):
        chapter_rag(tiny_kb(), llm=OfflineLLM(), qa_pairs=qa_pairs)


def test_answerability_true_fits_a_detector_on_the_kb(wiring, monkeypatch):
    def fitted(question, nodes):  # a stand-in detector: callable (question, nodes) -> verdict
        return None

    kb = tiny_kb()
    calls = []
    monkeypatch.setattr(cs, "fit_detector", lambda k: calls.append(k) or fitted)
    assert chapter_rag(kb, llm=OfflineLLM(), answerability=True).answerability is fitted
    assert calls == [kb]
    assert chapter_rag(kb, llm=OfflineLLM(), answerability=False).answerability is None
    def given(question, nodes):
        return None

    assert chapter_rag(kb, llm=OfflineLLM(), answerability=given).answerability is given
    assert calls == [kb]


def test_the_llm_defaults_to_the_configured_one(wiring, monkeypatch):
    configured = OfflineLLM()
    monkeypatch.setattr(cs, "get_llm", lambda: configured)
    assert chapter_rag(tiny_kb()).llm is configured
