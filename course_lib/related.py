"""Recommending related questions from stored question-answer pairs.

The chapter's other use of QA pairs: when a user asks question A, show the stored
questions A' closest to it; a click on one returns its stored answer directly, without
retrieval or generation. Here the stored pairs are any group of QA nodes — those an LLM
wrote (``LLMParser(task_type="qa")``) or, for a measurable check, CMRC's own questions
filed under their gold paragraphs
(:func:`course_lib.lab.data.question_bank.question_bank`). "Closest" is whatever the retriever
over that group ranks first; :func:`related_questions` only drops the asked
question itself and repeated questions.

>>> from course_lib.document import Document
>>> from course_lib.llm_groups import QADocNode
>>> doc = Document(texts={"faq.txt": "x"})
>>> pairs = [("茶叶怎么保存？", "密封避光"), ("绿茶用多少度的水泡？", "80度"),
...          ("红茶用多少度的水泡？", "95度")]
>>> doc.create_node_group("qa", transform=lambda _: [QADocNode(q, answer=a) for q, a in pairs])
>>> bank = Retriever(doc, "qa", "bm25_char")
>>> [(node.text, node.answer) for node in related_questions("绿茶用多少度的水泡？", bank, k=1)]
[('红茶用多少度的水泡？', '95度')]
"""

from __future__ import annotations

from ._support.validation import check_int, validate_query
from .node import DocNode
from .retriever import Retriever

__all__ = ["related_questions"]


def related_questions(question: str, retriever: Retriever, k: int = 3) -> list[DocNode]:
    """The ``k`` stored questions that ``retriever`` ranks closest to ``question``, best
    first: not the question itself (asked verbatim, it is answered, not recommended) and
    each question text once. Fewer than ``k`` when the group holds no more matches.

    ``retriever`` is a :class:`~course_lib.retriever.Retriever` over a group of stored
    questions (QA nodes); its own ``topk`` is not used: it is asked for more candidates
    until ``k`` remain after the drops.
    """
    validate_query(question)
    k = check_int(k, "k", low=1)
    if not isinstance(retriever, Retriever):
        raise TypeError(f"retriever must be a Retriever over a group of stored questions, got "
                        f"{type(retriever).__name__}")
    asked = question.strip()
    want = k + 1
    while True:
        found = retriever.retrieve(question, topk=min(want, 10_000))
        kept: list[DocNode] = []
        seen = {asked}
        for node in found:
            text = node.text.strip()
            if text not in seen:
                seen.add(text)
                kept.append(node)
        if len(kept) >= k or len(found) < want or want >= 10_000:
            return kept[:k]
        want *= 4  # many repeats of the asked question: look further down the ranking
