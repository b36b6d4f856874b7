"""The course's laboratory: what the notebooks use to *measure* the RAG ideas.

Data sets and the knowledge base (:mod:`.datasets`), named pipelines (:mod:`.pipelines`),
evaluation and its statistics (:mod:`.evaluation`, :mod:`.significance`,
:mod:`.comparison`, :mod:`.trec`), the reproduced tables (:mod:`.reproduce`), the command
line (:mod:`.cli`), exercises and their checks, plots and widgets; the knowledge base as a
document (:mod:`.kb_document`), the chapter's system (:mod:`.chapter_system`), the question
bank (:mod:`.question_bank`), and measuring RAG systems and answerability
(:mod:`.rag_evaluation`, :mod:`.answerability_evaluation`). Nothing at the package
root (the ideas) imports from here; ``make lint`` checks it.
"""
