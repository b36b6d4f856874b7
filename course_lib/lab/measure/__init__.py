"""Measuring: run a system over labelled questions, score it, and say which differences are
real.

:mod:`.evaluation` (recall@k, MRR, context relevance per question), :mod:`.significance`
(intervals and paired tests — the course's statistics in one place), :mod:`.comparison`,
:mod:`.folds`, :mod:`.wins` and :mod:`.claims` (comparisons a statistician would sign),
:mod:`.trec` (TREC runs and qrels, nDCG@10), :mod:`.reproduce` and :mod:`.stage_ablations`
(the chapter's tables and what each stage adds), :mod:`.rag_evaluation` (a whole RAG system),
:mod:`.answerability_evaluation`, :mod:`.answerability_tiers`, :mod:`.article_tiers` and
:mod:`.swap_reading` (the "not in the knowledge base" detector). Imports the data and the
systems, never the teaching or the pictures.
"""
