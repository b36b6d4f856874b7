"""The data: SQuAD files read with care, the knowledge bases built from them, and the question
sets made from their questions.

:mod:`.squad` (the file format), :mod:`.datasets` (CMRC 2018 and DRCD: fetch, verify, cache,
build a knowledge base), :mod:`.kb_document` (a knowledge base as a
:class:`~course_lib.document.Document`), :mod:`.settings` (the knowledge bases where each upgrade
should win), :mod:`.question_bank` (questions stored as QA pairs), :mod:`.vague_queries` (vague
questions made from specific ones). Imports nothing else of the lab.
"""
