"""What each notebook's exercise asks: the names of its answers, its hints in the order they
are shown, the tolerance for numbers, and the questions a classroom lab asks to be answered in
words after the check (graded by the teacher: :mod:`.written_answers`). The checking is
:mod:`.exercises`; the answers themselves, and the written answers'
marking schemes, are in the worked solutions, never here.

>>> EXERCISES["01"].answers
('recall_10', 'mrr_10')
>>> [item.name for item in EXERCISES["12"].written]
['max-wrong', 'cost-choice']
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Written:
    """A question the student answers in words, after the check, graded by the teacher
    (nbgrader's manually graded answer, :mod:`course_lib.lab.teaching.written_answers`). ``name`` is
    its id in the gradebook (``written-NN-name``); ``points`` what it is worth. Its marking
    scheme is the teacher's, like the answers: the ``Marking name:`` paragraph of the worked
    solution's docstring, never here."""

    name: str
    question: str
    points: int = 2


@dataclass(frozen=True)
class Exercise:
    """The answers' names, the hints in the order they are shown (the first names the idea,
    the next says where to look), and the tolerance for numbers (see
    :func:`course_lib.lab.teaching.answer_keys.agree`). The last step, the whole method, is not
    here: it is the ``Method:`` paragraph of the worked solution's docstring
    (:func:`~course_lib.lab.teaching.exercises.method`), so a copy of the course without
    ``solutions/`` cannot show it."""

    answers: tuple[str, ...]
    hints: tuple[str, ...]
    tolerance: float = 1e-3
    written: tuple[Written, ...] = ()


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
    ), written=(
        Written("top-10", "Is it worth handing the generator 10 paragraphs instead of 5 here? "
                "Answer with your numbers: how many more of the 1,000 questions get their gold "
                "paragraph at 10 than at 5, what the five extra paragraphs cost on every "
                "question, and how MRR@10 compares with MRR@5, and why."),
        Written("paired-test", "Section 7 compared two pipelines with a paired test. Would an "
                "exact McNemar test of this retriever's recall@10 against its own recall@5 tell "
                "you anything? Say why or why not, and what is still uncertain about the gain "
                "you measured."),
    )),
    "02": Exercise(("plain_share", "sub_share"), (
        "A pair counts only when both of its gold paragraphs are among the paragraphs returned, "
        "and both methods return two paragraphs per pair, so the comparison is fair.",
        "Plain: BM25 with topk=2 on the glued question. Rewritten: SubQuestionRetriever with "
        "OfflineLLM() over a BM25 retriever with topk=1, one paragraph per sub-question.",
    ), written=(
        Written("sub-questions", "Both methods hand over two paragraphs. What does plain BM25 do "
                "with the glued question's terms, and what does splitting it into sub-questions "
                "change? Name one way splitting can go wrong."),
        Written("fifty-pairs", "With 50 pairs, how many would have to go one way, and none the "
                "other, for an exact McNemar test to reach p < 0.05? Does your result reach it, "
                "and what would you do before claiming that one method wins?"),
    )),
    "03": Exercise(("tiny_span_recall_5", "tiny_context_relevance_1"), (
        "A new, smaller chunk size is a new node group: cut the paragraphs into chunks of 64 "
        "characters that overlap by 8, retrieve chunks with BM25, and measure them with span "
        "recall as well as the other metrics.",
        "create_node_group on the fresh tiny_doc with a SentenceSplitter as its transform; a "
        "Retriever on that group; evaluate with span_recall=True gives span_recall@5 and "
        "context_relevance@1.",
    ), written=(
        Written("tiny-chunks", "Where does TinyChunk fall against FineChunk on span recall@5 and "
                "on context relevance@1? Explain both results, the second from how context "
                "relevance scores a chunk's sentences."),
    )),
    "04": Exercise(("in_context_recall_1", "in_context_recall_5"), (
        "Each unit is one sentence with its paragraph's first sentence in front of it; search "
        "the units, then hand back the paragraphs they came from, small to big.",
        "A NodeTransform subclass turns one paragraph into a list of texts; create_node_group "
        "with parent='paragraph' builds the group, and small_to_big retrieves units and returns "
        "their paragraphs.",
    ), written=(
        Written("first-sentence", "What did putting the paragraph's first sentence in front of "
                "each sentence buy, at k = 1 and at k = 5, against plain sentences and against "
                "retrieving paragraphs directly? Why does the first sentence help a sentence "
                "match its question?"),
    )),
    "05": Exercise(("lead_recall_1", "lead_recall_5"), (
        "The lead is one sentence per block, its first: retrieve leads, return the blocks they "
        "lead, and measure that as for the other groups.",
        "A group under 'block' whose transform keeps only the first of split_sentences(text); "
        "to_blocks retrieves through a group and hands back blocks.",
    ), written=(
        Written("lead", "Is the lead a better stand-in for the block than its TextRank summary? "
                "Answer with both recalls of each, say whether the differences are large enough "
                "to decide, and why both stand-ins fall so far below matching the whole block."),
    )),
    "06": Exercise(("same_first_share", "mean_first_score", "largest_score_gap"), (
        "Compare two retrievers question by question, each keeping one paragraph: one scores by "
        "the dot product of sparse character vectors, the other by BM25 over characters. Count "
        "agreements, average one score, and find the widest gap between the two scores.",
        "The dot retriever works on the document with two embed keys, through the sparse key "
        "only; the BM25 one is like chars above. Each returns nodes with a text and a score.",
    ), written=(
        Written("same-formula", "What do your three numbers say about the sparse dot product "
                "against BM25 on characters? Explain it from what the sparse embedder puts in a "
                "paragraph's vector and in a query's, and say what a sparse key on a document "
                "is then good for."),
        Written("scales", "Compare your mean first score with the cosines e5 gives. What would go "
                "wrong if a document added its sparse and its dense key's scores to rank "
                "paragraphs, and what does fusing the keys by rank give up in exchange?"),
    )),
    "07": Exercise(("best_cut_off", "dev_recall", "dev_relevance"), (
        "A choice under a constraint, then a report elsewhere: on trial, keep only the cut-offs "
        "whose recall@5 meets the rule and take the one with the most context relevance@5, on "
        "the fine grid of the exercise, not the coarse one above; then measure that one cut-off "
        "on the held-out dev questions.",
        "cut_off_sweep gives one row per cut-off, with its recall@5 and its context_relevance@5: "
        "filter trial's rows by the rule and take the best; the dev rankings of section 3 swept "
        "at that single cut-off give the dev numbers.",
    ), written=(
        Written("trial-dev", "Why is the cut-off chosen on trial but reported on dev? Compare "
                "your dev numbers with what trial showed at the same cut-off: did the recall "
                "rule hold, and was the context relevance what trial promised? Say what "
                "explains each."),
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
    ), written=(
        Written("dense-signals", "What do the two dense signals add over the four lexical ones, "
                "on trial and on dev? Does section 4's dev table explain what you found on dev, "
                "and what may and may not be concluded from comparing the two sets' gains?"),
        Written("score-cut-off", "Section 6 chose a cut-off of 2.0 on the full reranker's score. "
                "Would you keep 2.0 for your lexical-only reranker? Say what the score is, why "
                "its scale may change when two signals are dropped, and how you would set the "
                "cut-off instead."),
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
    ), written=(
        Written("absolute-signal", "Why does the rule look at the term coverage of the best "
                "candidate rather than at the reranker's score? And why does the exercise drop "
                "every candidate of the gold paragraph's file, not only the gold paragraph, to "
                "make a question unanswerable?"),
        Written("promise-on-dev", "Did the rule keep its promise on dev? Compare dev's two shares "
                "with trial's at your threshold, say why the shares to report are dev's, and "
                "what you can and cannot say about the gap between the two sets."),
    )),
    "10": Exercise(("char_summary_recall_1", "dev_gain", "dev_low"), (
        "A new row from parts the report already uses: a summary per paragraph, matched on "
        "characters instead of words, each summary handing back its paragraph before the metrics "
        "are read. Explore it on trial; then build the same on the held-out dev set and compare "
        "it with the word row question by question.",
        "The pipelines module builds the summaries and hands back paragraphs; evaluate reads the "
        "recalls and keeps each question's; the significance module's paired comparison gives "
        "the difference and its interval.",
    ), written=(
        Written("characters", "Through summaries, how do characters compare with words on trial, "
                "and how does that compare with the two on whole paragraphs? Give a reason for "
                "what you find, from what a two-sentence summary holds compared with a whole "
                "paragraph."),
        Written("dev-test", "What does your dev comparison show, and how does it differ as "
                "evidence from trial's lead of characters on whole paragraphs? Say what the "
                "interval, the pairing and the use of dev each contribute."),
    )),
    "11": Exercise(("hnsw_recall_at_10", "smallest_ef_for_0_98"), (
        "An approximate index is measured against the exact one: for each question, the share of "
        "the exact search's 10 neighbours that the approximate search returns too. Then walk up "
        "the grid of ef values to the first that reaches the target.",
        "Embed the questions as queries, not as passages; build one DenseVectors with the faiss "
        "backend and one with hnsw at each ef_search; search returns ids and scores, and only "
        "the ids are compared.",
    ), written=(
        Written("ef-search", "What does ef_search trade, in your numbers and in the benchmark's? "
                "Would the ef_search you found on 256 paragraphs reach the same recall@10 on "
                "100,000 vectors? Say what you would measure before choosing it there."),
    )),
    "12": Exercise(("chosen_max_wrong", "dev_cost"), (
        "A cost is a weighted count of the two errors: declining a question the knowledge base "
        "can answer, and answering one it cannot. Choose the setting with the lowest mean cost "
        "on trial, and only then measure that one setting on dev.",
        "cross_validate gives, per question, whether it was declined and whether it is "
        "answerable; the costs are COST_DECLINED and COST_ANSWERED; run it once per value of "
        "MAX_WRONGS on trial_hard, and once more on dev_hard.",
    ), written=(
        Written("max-wrong", "What does max_wrong promise, and what do a larger and a smaller "
                "value do to the two kinds of error? Why choose it on the hard tiers (topic "
                "present, swapped subject) rather than on questions whose paragraph was simply "
                "removed?"),
        Written("cost-choice", "Is your choice the default 0.05? Compare the two settings' dev "
                "costs, say what you would need before changing the help desk's setting, and "
                "which part of the best setting depends on who asks the questions."),
    ), tolerance=1e-5),  # a mean cost moves by ~1e-4 between question sets: 1e-3 passed them
    "13": Exercise(("low", "high"), (
        "A paired difference between two pipelines on the held-out questions, in MRR@5, with an "
        "interval that keeps each paragraph's questions together: a cluster bootstrap.",
        "Section 2 computes such intervals for recall@1 on both sets; the exercise asks for the "
        "other metric, on the held-out set only, with each question's paragraph as its cluster.",
    ), written=(
        Written("clusters", "Compare your interval with one that resamples single questions: what "
                "does each say about the hybrid against e5? Why do their widths differ, and "
                "which would you report?"),
        Written("not-detectable", "What may you write about the hybrid against e5 in MRR@5 on "
                "dev, and what may you not? What would it take to settle the question?"),
    ), tolerance=1e-4),  # resampling questions instead of paragraphs moves an end by ~1e-3
}
