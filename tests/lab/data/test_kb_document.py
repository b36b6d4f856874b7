"""The knowledge base as a Document (course_lib.lab.data.kb_document): its paragraph group, the
embedders it attaches, the summary group, and what set-up embeds (with stand-in models)."""

import numpy as np
import pytest

from course_lib.embedding_base import Embedder
from course_lib.lab.data import kb_document
from course_lib.lab.data.datasets import Question, SquadSet, build_knowledge_base
from course_lib.lab.data.kb_document import (
    embed_knowledge_base,
    knowledge_base_document,
    summary_document,
)

TEA = "龙井属于绿茶。普洱属于黑茶。"
WALL = "长城东起山海关。长城西至嘉峪关。"
RIVER = "长江流经上海。"


def tiny_kb():
    questions = [Question("q1", "普洱属于哪一类茶？", ["黑茶"], [TEA.index("黑茶")], "p1", TEA),
                 Question("q2", "长城西至哪里？", ["嘉峪关"], [WALL.index("嘉峪关")], "p2", WALL)]
    return build_knowledge_base(SquadSet([("p1", TEA), ("p2", WALL), ("p3", RIVER)], questions),
                                docs_per_file=2)


class Recorder(Embedder):
    """A stand-in model: remembers what it embedded, as passages and as queries."""

    dim = 2

    def __init__(self, name):
        self.name, self.passages, self.queries = name, [], []

    def _embed(self, texts):
        self.passages += texts
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    def embed_queries(self, texts):
        self.queries += list(texts)
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


@pytest.fixture
def models(monkeypatch):
    """Replace the course's embedders and the reranker's preparation by recorders."""
    made, prepared = {}, []

    def default_embedder(model="e5"):
        return made.setdefault(model, Recorder(f"fake-{model}"))

    class Features:
        def prepare(self, texts):
            prepared.append(list(texts))

    monkeypatch.setattr(kb_document, "default_embedder", default_embedder)
    monkeypatch.setattr(kb_document, "FeatureReranker", Features)
    return made, prepared


def test_one_paragraph_node_per_line_of_each_file():
    doc = knowledge_base_document(tiny_kb())
    nodes = doc.get_nodes("paragraph")
    assert [n.text for n in nodes] == [TEA, WALL, RIVER]
    assert [n.metadata["file_name"] for n in nodes] == ["doc_1.txt", "doc_1.txt", "doc_2.txt"]
    assert doc.embed == {}  # no model unless asked


@pytest.mark.parametrize("embed, key", [(True, "e5"), ("e5", "e5"), ("use", "use")])
def test_embed_attaches_the_named_model_under_its_key(models, embed, key):
    doc = knowledge_base_document(tiny_kb(), embed=embed)
    assert {k: e.name for k, e in doc.embed.items()} == {key: f"fake-{key}"}


@pytest.mark.parametrize("embed", [
    "bge", None, "E5", 2.0,
    1,
])
def test_other_embed_values_are_refused(embed):
    with pytest.raises(ValueError, match=r"embed must be False, True \(e5\), 'e5' or 'use'"):
        knowledge_base_document(tiny_kb(), embed=embed)


def test_the_summary_group_holds_one_summary_under_each_paragraph():
    long_text = "。".join(f"第{i}句讲长城的第{i}段历史" for i in range(12)) + "。"
    kb = build_knowledge_base(SquadSet([("p1", TEA), ("p2", long_text)], []))
    doc = summary_document(kb)
    summaries = doc.get_nodes("summary")
    assert [n.parent.text for n in summaries] == [TEA, long_text]
    assert all(n.text.strip() for n in summaries)
    assert len(summaries[1].text) < len(long_text)  # a summary, not the paragraph again


def test_summary_document_passes_embed_on(models):
    doc = summary_document(tiny_kb(), embed="use")
    assert list(doc.embed) == ["use"]
    assert len(doc.get_nodes("summary")) == 3


def test_set_up_embeds_paragraphs_questions_and_for_e5_chunks_and_sentences(models):
    made, prepared = models
    kb = tiny_kb()
    done = embed_knowledge_base(kb)
    chunks = [n.text for n in knowledge_base_document(kb).get_nodes("CoarseChunk")]
    questions = [q.question for q in kb.questions]
    assert done == {"e5": 3 + len(chunks) + 2, "use": 3 + 2}
    assert set(made) == {"e5", "use"}
    assert made["e5"].queries == questions and made["use"].queries == questions
    assert set(made["use"].passages) == {TEA, WALL, RIVER}
    assert set(made["e5"].passages) == {TEA, WALL, RIVER, *chunks}
    assert prepared == [[TEA, WALL, RIVER, *chunks]]  # the reranker reads e5's texts only


def test_set_up_embeds_only_the_models_asked(models):
    made, prepared = models
    assert embed_knowledge_base(tiny_kb(), models=("use",)) == {"use": 5}
    assert list(made) == ["use"] and prepared == []
