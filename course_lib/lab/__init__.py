"""The course's laboratory: what the notebooks use to *measure* the RAG ideas.

Data sets and the knowledge base (:mod:`.datasets`), named pipelines (:mod:`.pipelines`),
evaluation and its statistics (:mod:`.evaluation`, :mod:`.significance`,
:mod:`.comparison`, :mod:`.trec`), the reproduced tables (:mod:`.reproduce`), the command
line (:mod:`.cli`), exercises and their checks, plots and widgets. Nothing at the package
root (the ideas) imports from here; ``make lint`` checks it.
"""
