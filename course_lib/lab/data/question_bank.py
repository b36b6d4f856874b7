"""A question bank: CMRC's own questions stored as QA pairs under their gold paragraphs,
and a check of :func:`~course_lib.related.related_questions` over it.

Stored questions hang under their gold paragraphs, and the check counts recommendations
from the same one (here two paragraphs, two questions each):

>>> from course_lib import Retriever
>>> from course_lib.lab.data.datasets import KnowledgeBase, Question
>>> tea, wall = "绿茶用八十度的水泡，红茶用沸水泡。", "长城东起山海关，西至嘉峪关。"
>>> asked = [("绿茶用多少度的水泡？", "p1", tea), ("红茶用什么水泡？", "p1", tea),
...          ("长城东起哪里？", "p2", wall), ("长城西至哪里？", "p2", wall)]
>>> kb = KnowledgeBase({"a.txt": tea + "\\n" + wall},
...                    [Question(f"q{i}", q, ["x"], [0], pid, text, "a.txt")
...                     for i, (q, pid, text) in enumerate(asked)], [tea, wall], [], [])
>>> bank = question_bank(kb)
>>> [(n.text, n.parent.text == wall) for n in bank.get_nodes("stored_qa")][2]
('长城东起哪里？', True)
>>> same_paragraph_rates(kb, Retriever(bank, "stored_qa", "bm25_char"), k=1)
{'asked': 4, 'top1': 1.0, 'any_of_k': 1.0, 'chance': 0.3333}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..._support.validation import check_int
from ...document import Document
from ...llm_groups import QADocNode
from ...node import DocNode
from ...related import related_questions
from ...retriever import Retriever
from .datasets import KnowledgeBase, Question
from .kb_document import knowledge_base_document

__all__ = ["BANK_GROUP", "question_bank", "same_paragraph_rates"]

BANK_GROUP = "stored_qa"


def question_bank(kb: KnowledgeBase, group: str = BANK_GROUP, embed: bool | str = False,
                  questions: Sequence[Question] | None = None) -> Document:
    """The knowledge base's document (``paragraph`` group, see
    :func:`~course_lib.lab.data.kb_document.knowledge_base_document`) with CMRC's own questions as
    stored QA pairs: group ``group`` under ``paragraph``, one
    :class:`~course_lib.llm_groups.QADocNode` per question — its text the question, its
    answer the first gold answer — filed under its gold paragraph, with metadata
    ``question_id`` and ``paragraph_id`` (and the file's, inherited).

    ``questions`` stores only those (questions of ``kb``; default: all of them) — e.g.
    the stored half of a split, so that the other half can be asked without asking a
    stored question (:func:`course_lib.lab.measure.rag_evaluation.split_stored_asked`).

    Built in memory from the data on this machine; nothing is written.
    """
    doc = knowledge_base_document(kb, embed=embed)
    if questions is None:
        questions = kb.questions
    elif isinstance(questions, (str, bytes)) or not all(isinstance(q, Question)
                                                         for q in questions):
        raise TypeError("questions must be a list of Question objects of the knowledge base "
                        "(e.g. kb.questions[::2])")
    by_paragraph: dict[tuple[str, str], list[Any]] = {}
    for question in questions:
        by_paragraph.setdefault((question.file_name, question.paragraph), []).append(question)
    filed: set[tuple[str, str]] = set()

    def file_questions(node: DocNode) -> list[QADocNode]:
        where = (node.metadata["file_name"], node.text)
        if where in filed:  # a paragraph repeated in one file: its questions once
            return []
        filed.add(where)
        return [QADocNode(q.question, answer=q.answers[0],
                          metadata={"question_id": q.id, "paragraph_id": q.paragraph_id})
                for q in by_paragraph.get(where, [])]

    doc.create_node_group(group, parent="paragraph", transform=file_questions, trans_node=True)
    return doc


def same_paragraph_rates(kb: KnowledgeBase, retriever: Retriever,
                         k: int = 3) -> dict[str, float | int]:
    """A sanity check of recommendations over a :func:`question_bank`: ask every question
    whose paragraph has at least one other question, and count how often the first
    recommendation (``top1``), or any of the ``k`` (``any_of_k``), asks about the same
    paragraph. ``chance`` is the first share for a recommender that picks a stored question
    at random (the mean, over the questions asked, of the paragraph's other questions over
    all other questions); ``asked`` is how many were asked.

    Recommendations are matched to paragraphs by their ``paragraph_id`` metadata.
    """
    k = check_int(k, "k", low=1)
    per_paragraph = Counter(q.paragraph_id for q in kb.questions)
    asked = [q for q in kb.questions if per_paragraph[q.paragraph_id] > 1]
    if not asked:
        raise ValueError("no paragraph of the knowledge base has two questions: nothing to check")
    top1 = any_of_k = 0
    chance = 0.0
    for q in asked:
        recommended = related_questions(q.question, retriever, k)
        same = [node.metadata.get("paragraph_id") == q.paragraph_id for node in recommended]
        top1 += bool(same) and same[0]
        any_of_k += any(same)
        chance += (per_paragraph[q.paragraph_id] - 1) / (len(kb.questions) - 1)
    return {"asked": len(asked), "top1": round(top1 / len(asked), 4),
            "any_of_k": round(any_of_k / len(asked), 4),
            "chance": round(chance / len(asked), 4)}
