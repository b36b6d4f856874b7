import pytest

from course_lib import Document, Retriever, load_sample
from course_lib.llm import ChatLLM, OfflineLLM, Reply
from course_lib.llm_groups import CHAPTER_TREE, LLMParser, QADocNode, build_chapter_tree


class ScriptedLLM(ChatLLM):
    """A "model" whose reply is a fixed string: the base class prompts and parses it."""

    backend = "scripted"

    def __init__(self, reply):
        self.reply = reply

    def chat(self, prompt, system=None):
        return Reply(self.reply, self.backend)


@pytest.fixture()
def sample_doc():
    texts, _ = load_sample()
    doc = Document(texts={k: v for k, v in texts.items() if k.endswith(".txt")})
    return doc


def test_llm_parser_with_a_model_reply_full_width_and_preamble(sample_doc):
    reply = "好的，以下是问答：\nQ：这是什么？\nA：长城\n2. 问：在哪里？ 答：北京"
    sample_doc.create_node_group("qa", transform=LLMParser(ScriptedLLM(reply), task_type="qa"))
    nodes = sample_doc.get_nodes("qa")
    assert [(n.text, n.answer) for n in nodes[:2]] == [("这是什么？", "长城"), ("在哪里？", "北京")]
    assert isinstance(nodes[0], QADocNode) and nodes[0].parent.group == "root"
    assert nodes[0].get_content() == "问：这是什么？\n答：长城"
    sample_doc.create_node_group("kw", transform=LLMParser(ScriptedLLM("关键词：甲，乙、丙"),
                                                            task_type="keywords"))
    assert sample_doc.get_nodes("kw")[0].metadata["keywords"] == ["甲", "乙", "丙"]


def test_qa_nodes_match_the_question_and_hand_over_the_answer(sample_doc):
    sample_doc.create_node_group("qa", transform=LLMParser(OfflineLLM(), task_type="qa"))
    hit = Retriever(sample_doc, "qa", "bm25_chinese", topk=1)("长城东起哪里？")[0]
    assert hit.text.endswith("？") and "哪里" in hit.text and hit.answer not in hit.text
    assert hit.answer in hit.get_content()
    assert hit.metadata["backend"] == "offline"


def test_parser_rejects_unknown_tasks():
    with pytest.raises(ValueError, match="task_type"):
        LLMParser(OfflineLLM(), task_type="translate")
    with pytest.raises(ValueError, match="language"):
        LLMParser(OfflineLLM(), language="fr")


def test_chapter_tree_on_the_sample_and_small_to_big(sample_doc):
    names = build_chapter_tree(sample_doc, OfflineLLM())
    assert names == list(CHAPTER_TREE)
    counts = {g: len(sample_doc.get_nodes(g)) for g in names}
    assert counts["block"] == 12 and counts["doc-summary"] == 4 and counts["block-summary"] == 12
    assert counts["sentence"] >= counts["block"] and counts["qapair"] > 0
    assert all(n.metadata["length"] >= 20 for n in sample_doc.get_nodes("sentence-len"))
    for group in ("keyword", "block-summary", "sentence", "qapair"):
        hits = Retriever(sample_doc, group, "bm25_chinese", topk=1)("普洱属于哪一类茶")
        blocks = sample_doc.find("block")(hits)
        assert blocks and "普洱" in blocks[0].text, group
    # Big-to-small: a block's sentences; sideways: its keywords.
    block = sample_doc.get_nodes("block")[0]
    assert sample_doc.find("sentence")([block])[0].parent is block
    assert sample_doc.find("keyword")([sample_doc.get_nodes("sentence")[0]])


def test_chapter_tree_on_cmrc(cmrc_kb):
    from course_lib import knowledge_base_document

    doc = knowledge_base_document(cmrc_kb)
    build_chapter_tree(doc, OfflineLLM())
    assert len(doc.get_nodes("block")) == 256 and len(doc.get_nodes("doc-summary")) == 26
    assert len(doc.get_nodes("qapair")) > 1000
