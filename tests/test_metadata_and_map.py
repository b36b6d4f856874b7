"""Readers that return parts, global_metadata (document, filters, persist) and the map index."""

import json
import time

import pytest

from course_lib import DocNode, Document, Retriever, readers, register_reader
from course_lib.llm_groups import QADocNode
from course_lib.store.persist import FORMAT_VERSION, PersistError, load, save


@pytest.fixture()
def jsonl_reader():
    """A ``.jsonl`` FAQ reader, one QA node per line, removed again after the test."""
    def read(path):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        return [QADocNode(row["q"], answer=row["a"], metadata={"category": row["c"]})
                for row in rows]

    register_reader(".jsonl", read)
    yield read
    readers.READERS.pop(".jsonl", None)


@pytest.fixture()
def faq_folder(tmp_path, jsonl_reader):
    rows = [{"q": "茶叶怎么保存？", "a": "密封避光", "c": "storage"},
            {"q": "绿茶用多少度的水泡？", "a": "80度", "c": "brewing"}]
    (tmp_path / "faq.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False)
                                                  for r in rows), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("普洱茶可以存放很多年。", encoding="utf-8")
    return tmp_path


# ------------------------------------------------------------ readers returning parts
def test_a_reader_returning_nodes_makes_one_root_per_part_with_file_and_own_metadata(
        faq_folder):
    doc = Document(faq_folder)
    roots = doc.get_nodes("root")
    assert [n.uid for n in roots] == ["faq.jsonl#0", "faq.jsonl#1", "notes.txt"]
    first = roots[0]
    assert isinstance(first, QADocNode) and first.answer == "密封避光"  # the class is kept
    assert first.metadata["category"] == "storage" and first.metadata["file_name"] == "faq.jsonl"
    assert first.parent is None and first.group == "root"
    assert "category" not in roots[2].metadata


def test_a_reader_returning_strings_and_the_parts_are_fresh_nodes(tmp_path):
    made = DocNode("乙", metadata={"row": 1})
    register_reader(".rows", lambda path: ["甲", made])
    try:
        (tmp_path / "x.rows").write_text("ignored", encoding="utf-8")
        roots = Document(files=[tmp_path / "x.rows"]).get_nodes("root")
    finally:
        readers.READERS.pop(".rows")
    assert [(n.uid, n.text, n.metadata.get("row")) for n in roots] == \
        [(f"{tmp_path / 'x.rows'}#0", "甲", None), (f"{tmp_path / 'x.rows'}#1", "乙", 1)]
    assert roots[1] is not made and made.uid == "" and made.metadata == {"row": 1}


# ------------------------------------------------------------ global_metadata
def test_global_metadata_is_one_shared_dict_and_metadata_is_per_node(faq_folder):
    doc = Document(faq_folder, global_metadata={"collection": "faq", "licence": "CC0"})
    doc.create_node_group("line", transform=lambda text: [text])
    chunk = doc.get_nodes("line")[0]
    assert chunk.global_metadata == {"collection": "faq", "licence": "CC0"}
    assert all(n.global_metadata is doc.global_metadata
               for g in ("root", "line", "FineChunk") for n in doc.get_nodes(g))
    doc.global_metadata["licence"] = "CC BY 4.0"  # seen by every node at once
    assert chunk.root.global_metadata["licence"] == "CC BY 4.0"
    chunk.metadata["category"] = "changed"  # metadata is the node's own copy
    assert chunk.root.metadata["category"] == "storage"
    assert "licence" not in chunk.metadata and "file_name" not in chunk.global_metadata


def test_global_metadata_is_copied_from_the_argument_and_defaults_to_empty():
    given = {"source": "mine"}
    doc = Document(texts=["甲"], global_metadata=given)
    given["source"] = "changed later"
    assert doc.global_metadata == {"source": "mine"}
    assert Document(texts=["甲"]).get_nodes("root")[0].global_metadata == {}


def test_a_transform_may_return_a_node_of_the_tree(faq_folder):
    doc = Document(faq_folder, global_metadata={"a": 1})
    doc.create_node_group("same", transform=lambda node: [node], trans_node=True)
    assert doc.get_nodes("same")[0].global_metadata is doc.global_metadata


def test_filters_read_metadata_first_then_global_metadata(faq_folder):
    doc = Document(faq_folder, global_metadata={"collection": "faq", "category": "global"})
    by_category = Retriever(doc, "root", "bm25_char", filters={"category": ["storage"]})
    assert [n.uid for n in by_category("茶")] == ["faq.jsonl#0"]
    # notes.txt has no category of its own: its global one applies
    globally = Retriever(doc, "root", "bm25_char", filters={"category": ["global"]})
    assert [n.uid for n in globally("茶")] == ["notes.txt"]
    everything = Retriever(doc, "root", "bm25_char", filters={"collection": ["faq"]})
    assert len(everything("茶")) == 3
    assert Retriever(doc, "root", "bm25_char", filters={"collection": ["other"]})("茶") == []
    with pytest.raises(ValueError, match=r"the keys its nodes have: \[.*'collection'"):
        Retriever(doc, "root", "bm25_char", filters={"colection": ["faq"]})("茶")


def test_persist_saves_and_loads_global_metadata(tmp_path, faq_folder):
    doc = Document(faq_folder, global_metadata={"licence": "CC0", "tags": ["a", 1]})
    doc.create_node_group("line", transform=lambda text: [text])
    Retriever(doc, "line", "bm25_char")("茶")
    loaded = load(save(doc, tmp_path / "kb"))
    assert loaded.global_metadata == {"licence": "CC0", "tags": ["a", 1]}
    assert all(n.global_metadata is loaded.global_metadata
               for g in ("root", "line") for n in loaded.get_nodes(g))
    assert [type(n).__name__ for n in loaded.get_nodes("root")] == \
        ["QADocNode", "QADocNode", "DocNode"]


def test_a_save_of_the_previous_format_is_refused_saying_to_rebuild(tmp_path):
    folder = save(Document(texts=["甲"]), tmp_path / "kb")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["format_version"] = FORMAT_VERSION - 1
    del manifest["global_metadata"]
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(PersistError, match=rf"uses format version {FORMAT_VERSION - 1}; this "
                                           rf"course_lib reads version {FORMAT_VERSION}: build"):
        load(folder)
    save(Document(texts=["乙"]), folder)  # still recognised as ours: replaced
    assert load(folder).get_nodes("root")[0].text == "乙"


# ------------------------------------------------------------ index="map"
@pytest.fixture()
def tagged():
    doc = Document(texts={"a.txt": "长城。\n故宫。", "b.txt": "普洱。"},
                   global_metadata={"source": "sample"})

    def lines(node):
        return [DocNode(text, metadata={"line": i, "tags": [] if "普洱" in text else ["景点"]})
                for i, text in enumerate(node.text.split("\n"))]

    doc.create_node_group("line", transform=lines, trans_node=True)
    return doc


def test_map_returns_every_match_in_document_order_ignoring_topk_and_similarity(tagged):
    by_file = Retriever(tagged, "line", "cosine", topk=1, index="map", map_key="file_name")
    found = by_file("a.txt")
    assert [n.text for n in found] == ["长城。", "故宫。"] and [n.score for n in found] == [1, 1]
    assert by_file("c.txt") == [] and by_file("a.tx") == []  # exact values only
    assert all(n.score is None for n in tagged.get_nodes("line"))  # copies carry the score


def test_map_on_text_numbers_lists_and_global_metadata(tagged):
    def look(key, query):
        return [n.text for n in Retriever(tagged, "line", index="map", map_key=key)(query)]

    assert look("text", "故宫。") == ["故宫。"] and look("text", "故宫") == []
    assert look("line", "0") == ["长城。", "普洱。"]  # values compared as strings
    assert look("tags", "景点") == ["长城。", "故宫。"]  # each item of a list
    assert look("source", "sample") == ["长城。", "故宫。", "普洱。"]  # global metadata


def test_map_applies_filters_and_is_built_once_per_group(tagged):
    retriever = Retriever(tagged, "line", index="map", map_key="line",
                          filters={"file_name": ["b.txt"]})
    assert [n.text for n in retriever("0")] == ["普洱。"]
    table = tagged.index("line").value_map("line")
    Retriever(tagged, "line", index="map", map_key="line")("1")
    assert tagged.index("line").value_map("line") is table


def test_map_refuses_a_dict_value(tagged):
    doc = Document(texts={"a.txt": "甲"})
    doc.create_node_group("x", transform=lambda text: [DocNode(text, metadata={"d": {"k": 1}})])
    with pytest.raises(TypeError, match=r"node 'a\.txt/x\[0\]' has a dict under 'd'"):
        Retriever(doc, "x", index="map", map_key="d")("1")


def test_map_is_a_lookup_faster_than_a_search():
    texts = {f"f{i}.txt": "\n".join(f"问题{i}-{j}：这是第{j}句。" for j in range(50))
             for i in range(40)}
    doc = Document(texts=texts)
    doc.create_node_group("line", transform=lambda text: text.split("\n"))
    exact = Retriever(doc, "line", index="map", map_key="text")
    search = Retriever(doc, "line", "bm25_char", topk=1)
    queries = [f"问题{i}-{i}：这是第{i}句。" for i in range(40)]
    assert [[n.text for n in exact(q)] for q in queries] == [[q] for q in queries]
    started = time.perf_counter()
    for q in queries:
        exact(q)
    looked_up = time.perf_counter() - started
    started = time.perf_counter()
    for q in queries:
        search(q)
    assert looked_up < time.perf_counter() - started
