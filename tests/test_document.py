import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bad_inputs import (
    Case,
    clear_error_test,
)

from course_lib import (
    ROOT,
    DocNode,
    Document,
    NodeTransform,
    SentenceSplitter,
    register_reader,
)
from course_lib.document import READERS

TEXTS = {"a.txt": "第一段。第一段第二句。\n第二段。", "b.txt": "Alpha beta.\nGamma delta."}


def lines(text):
    return text.split("\n")


def test_builtin_groups_exist_and_are_built_lazily():
    doc = Document(texts=TEXTS)
    assert doc.groups()[:4] == [ROOT, "CoarseChunk", "MediumChunk", "FineChunk"]
    assert doc.built_groups() == [ROOT]  # rules recorded, nothing built
    nodes = doc.get_nodes("FineChunk")
    assert {n.root.uid for n in nodes} == {"a.txt", "b.txt"}
    assert all(len(n.text) <= 128 for n in nodes)


def test_group_chain_is_built_on_first_use_only():
    calls = []

    def counting(text):
        calls.append(text)
        return lines(text)

    doc = Document(texts=TEXTS)
    doc.create_node_group("line", transform=counting)
    doc.create_node_group("sentence", transform=lambda t: t.split("。"), parent="line")
    assert calls == []
    sentences = doc.get_nodes("sentence")  # builds "line" first
    assert len(calls) == 2
    doc.get_nodes("sentence")
    doc.get_nodes("line")
    assert len(calls) == 2
    assert [s.text for s in sentences[:2]] == ["第一段", "第一段第二句"]
    assert sentences[0].parent.group == "line" and sentences[0].root.uid == "a.txt"


def test_children_and_parents_link_both_ways_with_metadata():
    doc = Document(texts=TEXTS)
    doc.create_node_group("line", transform=lines)
    line = doc.get_nodes("line")[0]
    root = line.parent
    assert root.children["line"][0] is line
    assert line.metadata["file_name"] == "a.txt"
    assert line.uid == "a.txt/line[0]"


class SplitOn:
    """A configurable callable class: split on a chosen symbol."""

    def __init__(self, symbol):
        self.symbol = symbol

    def __call__(self, text):
        return text.split(self.symbol)


class KeepLongNodes(NodeTransform):
    def __init__(self, min_chars=5):
        self.min_chars = min_chars

    def transform(self, node):
        return [t for t in node.text.split("\n") if len(t) >= self.min_chars]


def test_four_transform_styles_and_trans_node():
    doc = Document(texts=TEXTS)
    doc.create_node_group("by_function", transform=lines)
    doc.create_node_group("by_lambda", transform=lambda t: t.split("。"))
    doc.create_node_group("by_class_instance", transform=SplitOn("\n"))
    doc.create_node_group("by_class", transform=SplitOn, symbol=".")
    doc.create_node_group("by_node", trans_node=True,
                          transform=lambda node: [node.metadata["file_name"] + ":" + node.text[:3]])
    doc.create_node_group("by_subclass", transform=KeepLongNodes, min_chars=6)
    assert [n.text for n in doc.get_nodes("by_function")] == \
        [n.text for n in doc.get_nodes("by_class_instance")]
    assert "Alpha beta" in [n.text for n in doc.get_nodes("by_class")]
    assert [n.text for n in doc.get_nodes("by_node")] == ["a.txt:第一段", "b.txt:Alp"]
    assert [n.text for n in doc.get_nodes("by_subclass")] == \
        ["第一段。第一段第二句。", "Alpha beta.", "Gamma delta."]


def test_empty_results_are_dropped_and_nodes_may_be_returned():
    doc = Document(texts=TEXTS)
    doc.create_node_group("sparse", transform=lambda t: ["", "  ", t[:2]])
    doc.create_node_group("none", transform=lambda t: None)
    doc.create_node_group("self", transform=lambda n: [n], trans_node=True)
    assert [n.text for n in doc.get_nodes("sparse")] == ["第一", "Al"]
    assert doc.get_nodes("none") == []
    copies = doc.get_nodes("self")
    assert copies[0].parent.group == ROOT and copies[0].parent.parent is None


def test_sentence_splitter_as_transform():
    doc = Document(texts=TEXTS)
    doc.create_node_group("tiny", transform=SentenceSplitter, chunk_size=6, chunk_overlap=0)
    texts = [n.text for n in doc.get_nodes("tiny")]
    assert texts[:3] == ["第一段。", "第一段第二句", "。\n第二段。"]


def test_num_workers_gives_same_nodes():
    doc = Document(texts=TEXTS)
    doc.create_node_group("serial", transform=lines)
    doc.create_node_group("parallel", transform=lines, num_workers=2)
    assert [n.text for n in doc.get_nodes("serial")] == [n.text for n in doc.get_nodes("parallel")]


@pytest.mark.parametrize("kwargs,error,message", [
    ({"name": "CoarseChunk", "transform": lines}, ValueError, "already exists"),
    ({"name": "x", "transform": lines, "parent": "nope"}, ValueError, "unknown parent"),
    ({"name": "x", "transform": lines, "parent": "x"}, ValueError, "cycle"),
    ({"name": "", "transform": lines}, ValueError, "non-empty"),
    ({"name": "x", "transform": 42}, TypeError, "callable"),
    ({"name": "x", "transform": lines, "num_workers": -1}, ValueError, "num_workers"),
])
def test_bad_group_definitions(kwargs, error, message):
    with pytest.raises(error, match=message):
        Document(texts=TEXTS).create_node_group(**kwargs)


@pytest.mark.parametrize("transform,message", [
    (lambda t: 42, "must return str"),
    (lambda t: [1, 2], "inside its list"),
])
def test_wrong_return_types_name_the_group(transform, message):
    doc = Document(texts=TEXTS)
    doc.create_node_group("bad", transform=transform)
    with pytest.raises(TypeError, match=f"'bad'.*{message}|{message}"):
        doc.get_nodes("bad")


def test_unknown_group_lists_the_known_ones():
    with pytest.raises(ValueError, match="known groups"):
        Document(texts=TEXTS).get_nodes("Nope")


def test_find_small_to_big_big_to_small_and_siblings():
    doc = Document(texts=TEXTS)
    doc.create_node_group("line", transform=lines)
    doc.create_node_group("sentence", transform=lambda t: t.split("。"), parent="line")
    doc.create_node_group("word", transform=lambda t: t.split(" "), parent="line")
    sentences = doc.get_nodes("sentence")
    # Up: two sentences of one line give that line once, in input order.
    hits = [sentences[1].with_score(0.9), sentences[0].with_score(0.5), sentences[-1]]
    up = doc.find("line")(hits)
    assert [n.text for n in up] == ["第一段。第一段第二句。", "Gamma delta."]
    assert up[0].score == 0.9
    assert [n.uid for n in doc.find(ROOT)(hits)] == ["a.txt", "b.txt"]
    # Down: a root gives all its sentences.
    down = doc.find("sentence")([doc.get_nodes(ROOT)[1]])
    assert [n.text for n in down] == ["Alpha beta.", "Gamma delta."]
    # Sideways: from a sentence to the words of the same line.
    words = doc.find("word")([n for n in sentences if n.text == "Alpha beta."])
    assert [n.text for n in words] == ["Alpha", "beta."]


def test_sources_files_folder_and_custom_reader(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "one.txt").write_text("一。", encoding="utf-8")
    (tmp_path / "sub" / "two.md").write_text("# two", encoding="utf-8")
    (tmp_path / "three.csv").write_text("a,b\n1,2", encoding="utf-8")
    (tmp_path / "skip.bin").write_bytes(b"\0")
    doc = Document(tmp_path)
    assert [n.uid for n in doc.get_nodes(ROOT)] == ["one.txt", "sub/two.md"]
    meta = doc.get_nodes(ROOT)[0].metadata
    assert meta["file_name"] == "one.txt" and meta["file_size"] == 6 and "modified" in meta
    with pytest.raises(ValueError, match="no reader"):
        Document(files=[tmp_path / "three.csv"])
    register_reader(".csv", lambda p: p.read_text().replace(",", " | "))
    try:
        assert Document(files=[tmp_path / "three.csv"]).get_nodes(ROOT)[0].text == "a | b\n1 | 2"
    finally:
        READERS.pop(".csv")


def test_bad_sources():
    with pytest.raises(ValueError, match="exactly one"):
        Document()
    with pytest.raises(ValueError, match="exactly one"):
        Document("x", texts=["a"])
    with pytest.raises(FileNotFoundError, match="not a folder"):
        Document("/no/such/folder")
    with pytest.raises(TypeError, match="strings"):
        Document(texts=[1])
    with pytest.raises(ValueError, match="suffix"):
        register_reader("csv", str)


def test_docnode_identity_and_scored_copies():
    node = DocNode("文本", uid="u1")
    scored = node.with_score(0.5)
    assert scored == node and scored is not node and node.score is None
    assert len({node, scored}) == 1
    assert "score=0.5000" in repr(scored)
    # what copy.copy would give: the same class and attributes (containers shared, as in a
    # shallow copy), only the score new; a subclass stays itself
    import copy

    from course_lib.llm_groups import QADocNode

    node.metadata["file_name"] = "a.txt"
    for original in (node, QADocNode("问？", uid="q", metadata={"answer": "答"})):
        shallow, scored = copy.copy(original), original.with_score(0.25)
        assert type(scored) is type(original) and scored.score == 0.25
        assert {k: v for k, v in vars(scored).items() if k != "score"} == \
            {k: v for k, v in vars(shallow).items() if k != "score"}
        assert scored.metadata is original.metadata and original.score is None


def test_text_reader_reads_another_encoding_when_registered(tmp_path):
    from course_lib.readers import text_reader

    (tmp_path / "old.gbk").write_bytes("长城很长。".encode("gbk"))
    register_reader(".gbk", text_reader("gbk"))
    try:
        assert Document(files=[tmp_path / "old.gbk"]).get_nodes(ROOT)[0].text == "长城很长。"
    finally:
        READERS.pop(".gbk")


def test_size_limit_is_inclusive_and_adjustable(tmp_path, monkeypatch):
    from course_lib import readers

    (tmp_path / "a.txt").write_text("x" * 10, encoding="utf-8")
    monkeypatch.setattr(readers, "MAX_FILE_BYTES", 10)
    assert Document(tmp_path).get_nodes(ROOT)[0].text == "x" * 10
    monkeypatch.setattr(readers, "MAX_FILE_BYTES", 9)
    with pytest.raises(ValueError, match="is 10 bytes, above the limit of 9 bytes"):
        Document(tmp_path)


def test_symlinks_inside_the_folder_are_read(tmp_path):
    if not hasattr(os, "symlink") or os.name != "posix":
        pytest.skip("symlinks need a POSIX system")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("甲。", encoding="utf-8")
    (tmp_path / "b.txt").symlink_to(tmp_path / "sub" / "a.txt")
    roots = Document(tmp_path).get_nodes(ROOT)
    assert [(r.uid, r.text) for r in roots] == [("b.txt", "甲。"), ("sub/a.txt", "甲。")]


def test_generator_transforms_and_nodes_made_elsewhere():
    doc = Document(texts=TEXTS)
    doc.create_node_group("lines", transform=lambda t: (line for line in t.split("\n")))
    assert [n.text for n in doc.get_nodes("lines")][:2] == ["第一段。第一段第二句。", "第二段。"]
    empty = Document.from_nodes([], {})  # an empty document is allowed only from nodes
    assert empty.get_nodes(ROOT) == [] and "FineChunk" in empty.groups()


# ==================================================================== bad inputs
# Document's own checks: global_metadata, and what a group's transform returns.

def _transform(transform: Callable[[Any], Any], **options: Any) -> Any:
    doc = Document(texts={"a.txt": "长城很长。\n茶很香。"})
    doc.create_node_group("bad", transform=transform, **options)
    return doc.get_nodes("bad")


DOCUMENT_CASES: list[Case] = [Case("readers", *c) for c in [
    ("lone-surrogate-from-a-transform", lambda t: _transform(lambda s: ["茶\ud800"]),
     ValueError, r"node 0 made by transform \S*<lambda> of group 'bad' from 'a\.txt' holds a "
                 r"lone surrogate"),
    # -- global_metadata: a dict of JSON values with string keys
    ("global-metadata-a-list", lambda t: Document(texts=["甲"], global_metadata=["CC0"]),
     TypeError, r"global_metadata must be a dict such as \{'source': 'CMRC 2018'\}, got list"),
    ("global-metadata-int-key", lambda t: Document(texts=["甲"], global_metadata={1: "a"}),
     TypeError, r"global_metadata keys must be strings, got int 1"),
    ("global-metadata-not-json",
     lambda t: Document(texts=["甲"], global_metadata={"files": {Path("a")}}),
     TypeError, r"global_metadata\['files'\] is a set, which JSON cannot hold"),
    ("transform-returning-its-own-global-metadata",
     lambda t: _transform(lambda s: [DocNode(s, global_metadata={"licence": "x"})]),
     ValueError, r"transform \S*<lambda> of group 'bad' returned a DocNode with its own "
                 r"global_metadata .* put facts about this node in its metadata"),
    # -- transforms: name the transform, the group and what it must return
    ("transform-returning-docnode-of-int", lambda t: _transform(lambda s: [DocNode(123)]),
     TypeError, r"transform \S*<lambda> of group 'bad' returned a DocNode whose text is int "
                r"\(123\) for parent node 'a\.txt'; it must return str, a DocNode whose text"),
    ("transform-returning-a-dict", lambda t: _transform(lambda s: {"text": s}),
     TypeError, r"transform \S*<lambda> of group 'bad' must return str, DocNode or a list of "
                r"them \(or None\), got dict"),
    ("transform-returning-ints", lambda t: _transform(lambda s: [1, 2]),
     TypeError, r"transform \S*<lambda> of group 'bad' returned int 1 inside its list.*"
                r"expected str or DocNode"),
]]


test_bad_input_gets_a_clear_error = clear_error_test(DOCUMENT_CASES)


def _split_on_text_of_node(node: str) -> list[str]:
    return node.text.split("\n")  # a str has no .text: trans_node=True was forgotten


@pytest.mark.parametrize("workers", [0, 2], ids=["serial", "threads"])
def test_readers_transform_raising_keeps_its_error_with_a_note(workers: int) -> None:
    with pytest.raises(AttributeError, match="'str' object has no attribute 'text'") as raised:
        _transform(_split_on_text_of_node, num_workers=workers)
    note = " ".join(raised.value.__notes__)
    assert "transform _split_on_text_of_node of node group 'bad'" in note
    assert "parent node 'a.txt'" in note and "pass trans_node=True" in note
