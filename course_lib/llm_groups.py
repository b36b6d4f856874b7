"""Node groups built by a language model: summaries, keywords and question-answer pairs.

``LLMParser(llm, language, task_type)`` is a node transform. With the offline stand-in
the "LLM" is TextRank, TF-IDF and rule-written questions (see :mod:`course_lib.offline_llm`);
with a configured model it is the model. A QA node is matched on its **question** and
hands its **answer** (with the question) to the generator.

>>> from course_lib.llm import OfflineLLM
>>> doc = Document(texts={"a.txt": "长城东起山海关，西至嘉峪关。现存城墙大多修建于明朝。"})
>>> doc.create_node_group("qa", transform=LLMParser(OfflineLLM(), task_type="qa"))
>>> node = doc.get_nodes("qa")[0]
>>> node.text, node.answer
('长城东起哪里，西至嘉峪关？', '山海关')
"""

from __future__ import annotations

from dataclasses import dataclass

from .document import Document, NodeTransform
from .llm import ChatLLM
from .node import DocNode
from .offline_llm import split_sentences

TASKS = ("summary", "keywords", "qa")


@dataclass(eq=False)
class QADocNode(DocNode):
    """A question (the text retrieval matches) and its answer."""

    answer: str = ""

    def get_content(self) -> str:
        return f"问：{self.text}\n答：{self.answer}"


class LLMParser(NodeTransform):
    """Turn a node into its summary, its keywords, or question-answer pairs."""

    def __init__(self, llm: ChatLLM, language: str = "zh", task_type: str = "summary",
                 max_sentences: int = 2) -> None:
        if task_type not in TASKS:
            raise ValueError(f"task_type must be one of {TASKS}, got {task_type!r}")
        if language not in ("zh", "en"):
            raise ValueError(f"language must be 'zh' or 'en', got {language!r}")
        self.llm, self.language, self.task_type = llm, language, task_type
        self.max_sentences = max_sentences

    def transform(self, node: DocNode) -> list[DocNode]:
        if self.task_type == "summary":
            summary = self.llm.summarize(node.text, self.language, self.max_sentences)
            return [DocNode(summary, metadata={"backend": summary.backend})]
        if self.task_type == "keywords":
            words = self.llm.keywords(node.text, self.language)
            return [DocNode("，".join(words), metadata={"keywords": words,
                                                        "backend": self.llm.backend})] \
                if words else []
        return [QADocNode(question, answer=answer, metadata={"backend": self.llm.backend})
                for question, answer in self.llm.qa_pairs(node.text, self.language)]


def sentences_of(text: str) -> list[str]:
    return split_sentences(text)


class LongSentences(NodeTransform):
    """Sentences of at least ``min_chars`` characters, each with its length in metadata."""

    def __init__(self, min_chars: int = 10) -> None:
        self.min_chars = min_chars

    def transform(self, node: DocNode) -> list[DocNode]:
        return [DocNode(s, metadata={"length": len(s)}) for s in split_sentences(node.text)
                if len(s) >= self.min_chars]


CHAPTER_TREE = {
    # group: (parent, what it holds)
    "block": ("root", "paragraphs (one per line)"),
    "doc-summary": ("root", "a summary of the whole document"),
    "qapair": ("block", "question-answer pairs about the paragraph"),
    "keyword": ("block", "the paragraph's keywords"),
    "sentence": ("block", "sentences"),
    "block-summary": ("block", "a summary of the paragraph"),
    "sentence-len": ("sentence", "sentences of 20+ characters, with their length"),
}


def build_chapter_tree(doc: Document, llm: ChatLLM, language: str = "zh") -> list[str]:
    """Create the reference chapter's complex tree of groups on ``doc``; returns the names."""
    from .text_splitter import split_paragraphs

    doc.create_node_group("block", transform=split_paragraphs)
    doc.create_node_group("doc-summary", transform=LLMParser(llm, language, "summary",
                                                             max_sentences=3))
    doc.create_node_group("qapair", parent="block", transform=LLMParser(llm, language, "qa"))
    doc.create_node_group("keyword", parent="block",
                          transform=LLMParser(llm, language, "keywords"))
    doc.create_node_group("sentence", parent="block", transform=sentences_of)
    doc.create_node_group("block-summary", parent="block",
                          transform=LLMParser(llm, language, "summary"))
    doc.create_node_group("sentence-len", parent="sentence", transform=LongSentences,
                          min_chars=20)
    return list(CHAPTER_TREE)
