"""Worked solution: 10 Benchmark report.

The source of truth for `10_benchmark_report_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: summaries = summary_document(kb); Retriever(summaries, 'summary', 'bm25_char', topk=5);
small_to_big(retriever, summaries); then evaluate(kb, ...) and read recall@1 and recall@5.
"""

# %%
from course_lib import Retriever, evaluate, load_cmrc2018_kb
from course_lib.lab.pipelines import small_to_big, summary_document

kb = load_cmrc2018_kb()
summaries = summary_document(kb)
retriever = Retriever(summaries, "summary", "bm25_char", topk=5)
characters = evaluate(kb, small_to_big(retriever, summaries))
char_summary_recall_1, char_summary_recall_5 = characters["recall@1"], characters["recall@5"]
words = evaluate(kb, "bm25-summary-to-paragraph")
e5 = evaluate(kb, "cosine-summary-to-paragraph")
print("through summaries, recall@1 / recall@5: characters", char_summary_recall_1,
      char_summary_recall_5, "· words", words["recall@1"], words["recall@5"],
      "· e5", e5["recall@1"], e5["recall@5"])

# %%
# Characters help through summaries too — more than on whole paragraphs (0.966 → 0.979):
# a two-sentence summary has few words, so every question word it words differently costs
# more, and characters still match part of such a word (notebook 06).
assert char_summary_recall_1 > words["recall@1"] + 0.02
assert char_summary_recall_5 > words["recall@5"]
assert char_summary_recall_1 < evaluate(kb, "bm25-char-paragraph")["recall@1"]
# They do not catch up with e5, though: what two copied sentences keep of a paragraph's
# meaning, a retrieval model still matches; its exact words, BM25 mostly loses.
assert char_summary_recall_1 < e5["recall@1"] and char_summary_recall_5 < e5["recall@5"]


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    summaries_only = evaluate(kb, Retriever(summaries, "summary", "bm25_char", topk=5))
    top1 = Retriever(summaries, "summary", "bm25_char", topk=1)
    one = evaluate(kb, small_to_big(top1, summaries))
    paragraphs = evaluate(kb, Retriever(summaries, "paragraph", "bm25_char", topk=5))
    return {
        "Those are the report's row 'summary → paragraph, BM25' (jieba words): the new row "
        "matches the summaries on characters (the bm25_char similarity).":
            {"char_summary_recall_1": words["recall@1"],
             "char_summary_recall_5": words["recall@5"]},
        "You scored the summaries themselves: a two-sentence summary never passes the hit "
        "rule against the whole gold paragraph. Hand back their paragraphs (small-to-big) "
        "before scoring.":
            {"char_summary_recall_1": summaries_only["recall@1"],
             "char_summary_recall_5": summaries_only["recall@5"]},
        "recall@5 equals recall@1: your retriever returns one summary. Give it a top k of 5.":
            {"char_summary_recall_1": one["recall@1"], "char_summary_recall_5": one["recall@5"]},
        "That is BM25 on characters over whole paragraphs (the similarity table's row): "
        "retrieve from the 'summary' group of the summary document.":
            {"char_summary_recall_1": paragraphs["recall@1"],
             "char_summary_recall_5": paragraphs["recall@5"]},
    }
