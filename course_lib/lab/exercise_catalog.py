"""What each notebook's exercise asks: the names of its answers, its hints in the order they
are shown, and the tolerance for numbers. The checking is :mod:`course_lib.lab.exercises`;
the answers themselves are in the worked solutions, never here.

>>> EXERCISES["01"].answers
('recall_10', 'mrr_10')
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    """The answers' names, the hints in the order they are shown (the first names the idea,
    the next says where to look), and the tolerance for numbers (see
    :func:`course_lib.lab.answer_keys.agree`). The last step, the whole method, is not here:
    it is the ``Method:`` paragraph of the worked solution's docstring
    (:func:`~course_lib.lab.exercises.method`), so a copy of the course without
    ``solutions/`` cannot show it."""

    answers: tuple[str, ...]
    hints: tuple[str, ...]
    tolerance: float = 1e-3


EXERCISES: dict[str, Exercise] = {
    "00": Exercise(("answer",), (
        "Two steps: find the paragraph with the most characters, then count the questions whose "
        "gold paragraph is that one; the answer pairs its file's name with that count.",
        "The knowledge base lists its paragraphs and its questions, and each question knows its "
        "paragraph and its file: compare texts, not positions.",
    )),
    "01": Exercise(("recall_10", "mrr_10"), (
        "The same evaluation as for the top 5, with a longer list: the retriever has to return "
        "10 paragraphs, and both metrics are read at 10.",
        "The Retriever's topk sets how many paragraphs come back; evaluate takes the cut-offs to "
        "report (ks) and returns recall@k and mrr@k for each.",
    )),
    "02": Exercise(("plain_share", "sub_share"), (
        "A pair counts only when both of its gold paragraphs are among the paragraphs returned, "
        "and both methods return two paragraphs per pair, so the comparison is fair.",
        "Plain: BM25 with topk=2 on the glued question. Rewritten: SubQuestionRetriever with "
        "OfflineLLM() over a BM25 retriever with topk=1, one paragraph per sub-question.",
    )),
    "03": Exercise(("tiny_span_recall_5", "tiny_context_relevance_1"), (
        "A new, smaller chunk size is a new node group: cut the paragraphs into chunks of 64 "
        "characters that overlap by 8, retrieve chunks with BM25, and measure them with span "
        "recall as well as the other metrics.",
        "create_node_group on the fresh tiny_doc with a SentenceSplitter as its transform; a "
        "Retriever on that group; evaluate with span_recall=True gives span_recall@5 and "
        "context_relevance@1.",
    )),
    "04": Exercise(("in_context_recall_1", "in_context_recall_5"), (
        "Each unit is one sentence with its paragraph's first sentence in front of it; search "
        "the units, then hand back the paragraphs they came from, small to big.",
        "A NodeTransform subclass turns one paragraph into a list of texts; create_node_group "
        "with parent='paragraph' builds the group, and small_to_big retrieves units and returns "
        "their paragraphs.",
    )),
    "05": Exercise(("lead_recall_1", "lead_recall_5"), (
        "The lead is one sentence per block, its first: retrieve leads, return the blocks they "
        "lead, and measure that as for the other groups.",
        "A group under 'block' whose transform keeps only the first of split_sentences(text); "
        "to_blocks retrieves through a group and hands back blocks.",
    )),
    "06": Exercise(("same_first_share", "mean_first_score", "largest_score_gap"), (
        "Compare two retrievers question by question, each keeping one paragraph: one scores by "
        "the dot product of sparse character vectors, the other by BM25 over characters. Count "
        "agreements, average one score, and find the widest gap between the two scores.",
        "The dot retriever works on the document with two embed keys, through the sparse key "
        "only; the BM25 one is like chars above. Each returns nodes with a text and a score.",
    )),
    "07": Exercise(("best_cut_off", "dev_recall", "dev_relevance"), (
        "A choice under a constraint, then a report elsewhere: on trial, keep only the cut-offs "
        "whose recall@5 meets the rule and take the one with the most context relevance@5, on "
        "the fine grid of the exercise, not the coarse one above; then measure that one cut-off "
        "on the held-out dev questions.",
        "cut_off_sweep gives one row per cut-off, with its recall@5 and its context_relevance@5: "
        "filter trial's rows by the rule and take the best; the dev rankings of section 3 swept "
        "at that single cut-off give the dev numbers.",
    )),
    "08": Exercise(("lexical_first", "dev_gain", "dev_low"), (
        "Keep everything of the full reranking pipeline except the two dense signals: the same "
        "three retrieval paths, five results. Count on trial how often the gold paragraph comes "
        "first; then run the reranker with and without the dense signals on the held-out dev "
        "questions and compare the two question by question.",
        "The offline reranker's class can be built without an embedder, which leaves only the "
        "lexical features; the course's pipelines module puts a reranker behind the three "
        "paths; the significance module's paired comparison of two per-question columns "
        "returns the difference and its interval.",
    )),
    "09": Exercise(("chosen_coverage", "dev_kept", "dev_refused"), (
        "One rule, two situations, two question sets: on each sample, score each question's best "
        "candidate when the knowledge base holds the answer, and again after taking the gold "
        "paragraph's file out of the candidates. Choose the threshold on trial by the stated "
        "constraint, then read its two shares on dev only.",
        "The best candidate is the reranker's first of what the retriever returned; the rule "
        "answers when term_coverage of the question in that text reaches the threshold; a "
        "question with no candidate left is refused. Dev's system is built like trial's, on "
        "the held-out knowledge base.",
    )),
    "10": Exercise(("char_summary_recall_1", "dev_gain", "dev_low"), (
        "A new row from parts the report already uses: a summary per paragraph, matched on "
        "characters instead of words, each summary handing back its paragraph before the metrics "
        "are read. Explore it on trial; then build the same on the held-out dev set and compare "
        "it with the word row question by question.",
        "The pipelines module builds the summaries and hands back paragraphs; evaluate reads the "
        "recalls and keeps each question's; the significance module's paired comparison gives "
        "the difference and its interval.",
    )),
    "11": Exercise(("hnsw_recall_at_10", "smallest_ef_for_0_98"), (
        "An approximate index is measured against the exact one: for each question, the share of "
        "the exact search's 10 neighbours that the approximate search returns too. Then walk up "
        "the grid of ef values to the first that reaches the target.",
        "Embed the questions as queries, not as passages; build one DenseVectors with the faiss "
        "backend and one with hnsw at each ef_search; search returns ids and scores, and only "
        "the ids are compared.",
    )),
    "12": Exercise(("chosen_max_wrong", "dev_cost"), (
        "A cost is a weighted count of the two errors: declining a question the knowledge base "
        "can answer, and answering one it cannot. Choose the setting with the lowest mean cost "
        "on trial, and only then measure that one setting on dev.",
        "cross_validate gives, per question, whether it was declined and whether it is "
        "answerable; the costs are COST_DECLINED and COST_ANSWERED; run it once per value of "
        "MAX_WRONGS on trial_hard, and once more on dev_hard.",
    ), tolerance=1e-5),  # a mean cost moves by ~1e-4 between question sets: 1e-3 passed them
    "13": Exercise(("low", "high"), (
        "A paired difference between two pipelines on the held-out questions, in MRR@5, with an "
        "interval that keeps each paragraph's questions together: a cluster bootstrap.",
        "Section 2 computes such intervals for recall@1 on both sets; the exercise asks for the "
        "other metric, on the held-out set only, with each question's paragraph as its cluster.",
    ), tolerance=1e-4),  # resampling questions instead of paragraphs moves an end by ~1e-3
}
