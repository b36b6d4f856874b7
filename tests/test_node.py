"""Tests of course_lib.node.DocNode: its text and defaults, uid as identity, the group,
parent and per-group children of the node tree, per-node metadata vs shared global
metadata, and the score carried by scored copies."""

import math

import numpy as np

from course_lib.node import DocNode


def tree():
    """A document cut into two sentence nodes and one paragraph node, each under the root."""
    root = DocNode("第一句。第二句。", group="root", uid="a.txt",
                   metadata={"file_name": "a.txt"}, global_metadata={"source": "test"})
    sentences = [DocNode(text, group="sentence", uid=f"a.txt/sentence[{i}]", parent=root,
                         metadata=dict(root.metadata), global_metadata=root.global_metadata)
                 for i, text in enumerate(["第一句。", "第二句。"])]
    paragraph = DocNode(root.text, group="paragraph", uid="a.txt/paragraph[0]", parent=root,
                        global_metadata=root.global_metadata)
    root.children["sentence"] = sentences
    root.children["paragraph"] = [paragraph]
    return root, sentences, paragraph


def test_a_bare_node_has_its_text_and_empty_defaults():
    node = DocNode("长城很长。")
    assert node.text == node.get_content() == "长城很长。"
    assert node.group == "root" and node.uid == "" and node.score is None
    assert node.parent is None and node.root is node
    assert node.children == {} and node.metadata == {} and node.global_metadata == {}
    assert node.embeddings == {} and node.found_by == {}


def test_default_containers_are_not_shared_between_nodes():
    one, two = DocNode("一"), DocNode("二")
    one.metadata["k"] = 1
    one.children["sentence"] = [DocNode("x")]
    one.global_metadata["g"] = 1
    assert two.metadata == {} and two.children == {} and two.global_metadata == {}


def test_children_are_kept_per_group_and_point_back_to_their_parent():
    root, sentences, paragraph = tree()
    assert sorted(root.children) == ["paragraph", "sentence"]
    assert [n.text for n in root.children["sentence"]] == ["第一句。", "第二句。"]
    assert root.children["paragraph"] == [paragraph]
    assert all(n.parent is root and n.group == "sentence" for n in sentences)
    assert paragraph.group == "paragraph" and paragraph.children == {}


def test_root_walks_up_any_number_of_levels():
    root, sentences, _ = tree()
    word = DocNode("第一", group="word", uid="a.txt/word[0]", parent=sentences[0])
    sentences[0].children["word"] = [word]
    assert word.root is root and sentences[1].root is root and root.root is root


def test_metadata_is_the_nodes_own_and_global_metadata_is_shared():
    root, sentences, paragraph = tree()
    sentences[0].metadata["position"] = 0
    assert "position" not in root.metadata and "position" not in sentences[1].metadata
    root.global_metadata["licence"] = "CC0"
    assert all(n.global_metadata["licence"] == "CC0" for n in [*sentences, paragraph])
    assert paragraph.metadata == {}  # given no metadata, a node has none of its parent's


def test_identity_is_the_uid_not_the_text_or_group():
    assert DocNode("甲", uid="u") == DocNode("乙", group="sentence", uid="u")
    assert DocNode("甲", uid="u") != DocNode("甲", uid="v")
    assert len({DocNode("甲", uid="u"), DocNode("乙", uid="u"), DocNode("甲", uid="v")}) == 2
    assert DocNode("甲", uid="u") != "u" and DocNode("甲", uid="u") != "甲"


def test_with_score_copies_and_shares_the_tree_links():
    root, sentences, _ = tree()
    scored = root.with_score(0.75)
    assert scored is not root and scored == root and type(scored) is DocNode
    assert scored.score == 0.75 and root.score is None
    assert scored.children is root.children and scored.metadata is root.metadata
    assert scored.global_metadata is root.global_metadata
    assert sentences[0].with_score(1.0).parent is root


def test_scores_of_two_copies_do_not_touch_each_other():
    node = DocNode("茶", uid="t")
    first, second = node.with_score(0.2), node.with_score(0.9)
    assert (first.score, second.score, node.score) == (0.2, 0.9, None)
    assert first.with_score(0.5).score == 0.5 and first.score == 0.2


def test_with_score_rounds_to_six_decimals_and_takes_numpy_like_numbers():
    node = DocNode("茶", uid="t")
    assert node.with_score(0.1234564999).score == 0.123456
    assert node.with_score(1 / 3).score == 0.333333
    scored = node.with_score(np.float32(0.5))
    assert scored.score == 0.5 and type(scored.score) is float
    assert node.with_score(3).score == 3.0


def test_non_finite_scores_are_kept_as_they_are():
    node = DocNode("茶", uid="t")
    assert node.with_score(float("inf")).score == math.inf
    assert node.with_score(-math.inf).score == -math.inf
    assert math.isnan(node.with_score(float("nan")).score)


def test_repr_shows_group_uid_a_short_text_and_the_score_when_there_is_one():
    short = DocNode("长城很长。", group="sentence", uid="a/0")
    assert repr(short) == "DocNode(group='sentence', uid='a/0', text='长城很长。')"
    long = DocNode("字" * 31, uid="b")
    assert repr(long) == f"DocNode(group='root', uid='b', text='{'字' * 30}…')"
    assert repr(DocNode("字" * 30, uid="c")).endswith(f"text='{'字' * 30}')")
    assert repr(short.with_score(0.5)).endswith("text='长城很长。', score=0.5000)")


def test_repr_leaves_out_the_tree_and_metadata():
    root, _, _ = tree()
    text = repr(root)
    assert "children" not in text and "metadata" not in text and "sentence" not in text
