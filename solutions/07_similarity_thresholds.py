"""Worked solution: 07 Similarity thresholds.

The source of truth for `07_similarity_thresholds_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import load_cmrc2018_kb
from course_lib.evaluation import cut_off_sweep
from course_lib.pipelines import build_pipeline

kb = load_cmrc2018_kb()
multipath = build_pipeline("multipath-rerank", kb).retrieve
rerank_rankings = [multipath(q.question) for q in kb.questions]
thresholds = [round(0.1 * i, 1) for i in range(31)]
sweep = cut_off_sweep(kb.questions, rerank_rankings, thresholds)
first = next(row for row in sweep if row["context_relevance@5"] >= 0.9)
smallest_cut_off, recall_at_that_cut_off = first["cut_off"], first["recall@5"]
print(smallest_cut_off, recall_at_that_cut_off, first["context_relevance@5"])

# %%
# Every smaller cut-off falls short of 0.9, and recall is still high at this one.
assert all(row["context_relevance@5"] < 0.9 for row in sweep if row["cut_off"] < smallest_cut_off)
assert recall_at_that_cut_off >= 0.95
