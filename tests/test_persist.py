import json

import numpy as np
import pytest

from course_lib import Document, Retriever, load_sample, split_paragraphs
from course_lib.embeddings import CachedEmbedder, USEEmbedder
from course_lib.llm import OfflineLLM
from course_lib.llm_groups import LLMParser, QADocNode
from course_lib.persist import PersistError, load, load_or_build, save


class NamedEmbedder:
    """A deterministic embedder with a model name (character counts)."""

    def __init__(self, name="chars-v1"):
        self.name = name

    def __call__(self, texts):
        return np.array([[t.count(c) for c in "长城茶奥运光Python"] + [1.0] for t in texts])


def built_document(embed=None):
    texts, _ = load_sample()
    doc = Document(texts=texts, embed=embed)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    doc.create_node_group("qa", parent="paragraph",
                          transform=LLMParser(OfflineLLM(), task_type="qa"))
    Retriever(doc, "paragraph", "bm25_chinese")("长城")
    Retriever(doc, "qa", "bm25_char")("长城")
    if embed:
        Retriever(doc, "paragraph", "cosine")("长城")
    return doc


def test_round_trip_gives_the_same_tree_indexes_and_results(tmp_path):
    doc = built_document(embed={"chars": NamedEmbedder()})
    save(doc, tmp_path / "kb")
    loaded = load(tmp_path / "kb", embed={"chars": NamedEmbedder()})
    assert loaded.built_groups() == doc.built_groups()
    for group in doc.built_groups():
        assert [(n.uid, n.text) for n in loaded.get_nodes(group)] == \
            [(n.uid, n.text) for n in doc.get_nodes(group)]
    qa = loaded.get_nodes("qa")[0]
    assert isinstance(qa, QADocNode) and qa.answer and qa.parent.group == "paragraph"
    assert qa.root.uid in {n.uid for n in loaded.get_nodes("root")}
    for similarity, group in (("bm25_chinese", "paragraph"), ("bm25_char", "qa"),
                              ("cosine", "paragraph")):
        before = [(n.uid, round(n.score, 9)) for n in Retriever(doc, group, similarity)("长城")]
        after = [(n.uid, round(n.score, 9)) for n in Retriever(loaded, group, similarity)("长城")]
        assert before == after
    # The loaded document keeps working: small-to-big and new groups.
    assert loaded.find("paragraph")([qa])[0].uid == qa.parent.uid
    loaded.create_node_group("first_char", parent="paragraph", transform=lambda t: t[:1])
    assert len(loaded.get_nodes("first_char")) == len(loaded.get_nodes("paragraph"))


def test_damage_version_and_model_mismatch_are_refused(tmp_path):
    save(built_document(embed={"chars": NamedEmbedder()}), tmp_path / "kb")
    with pytest.raises(PersistError, match="made by 'chars-v1'"):
        load(tmp_path / "kb", embed={"chars": NamedEmbedder("chars-v2")})
    index_file = next((tmp_path / "kb").glob("bm25-0.npz"))
    index_file.write_bytes(index_file.read_bytes()[:-10])
    with pytest.raises(PersistError, match="damaged"):
        load(tmp_path / "kb")
    save(built_document(), tmp_path / "kb")
    manifest = json.loads((tmp_path / "kb" / "manifest.json").read_text())
    manifest["format_version"] = 99
    (tmp_path / "kb" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(PersistError, match="format version 99"):
        load(tmp_path / "kb")
    with pytest.raises(PersistError, match="no saved knowledge base"):
        load(tmp_path / "nothing")


def test_load_or_build_rebuilds_and_says_why(tmp_path):
    messages, builds = [], []

    def build():
        builds.append(1)
        return built_document()

    first = load_or_build(tmp_path / "kb", build, report=messages.append)
    second = load_or_build(tmp_path / "kb", build, report=messages.append)
    assert len(builds) == 1 and len(messages) == 1 and "no saved knowledge base" in messages[0]
    assert [n.uid for n in second.get_nodes("qa")] == [n.uid for n in first.get_nodes("qa")]
    (tmp_path / "kb" / "nodes.jsonl.gz").write_bytes(b"garbage")
    load_or_build(tmp_path / "kb", build, report=messages.append)
    assert len(builds) == 2 and "damaged" in messages[-1]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp leftovers


def test_saved_use_vectors_are_reused_with_the_same_model(tmp_path):
    embedder = CachedEmbedder(USEEmbedder(threads=1), cache_dir=tmp_path / "cache")
    doc = built_document(embed={"use": embedder})
    save(doc, tmp_path / "kb")
    loaded = load(tmp_path / "kb", embed={"use": embedder})
    np.testing.assert_array_equal(loaded.embeddings("paragraph", "use"),
                                  doc.embeddings("paragraph", "use"))
