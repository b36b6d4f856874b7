"""Worked solution: 01 Evaluating retrieval.

The source of truth for `01_evaluating_retrieval_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import Retriever, evaluate, knowledge_base_document, load_cmrc2018_kb

kb = load_cmrc2018_kb()
retriever = Retriever(knowledge_base_document(kb), "paragraph", "bm25_chinese", topk=10)
result = evaluate(kb, retriever, ks=(5, 10))
recall_10, mrr_10 = result["recall@10"], result["mrr@10"]
print(recall_10, mrr_10, "vs recall@5", result["recall@5"])

# %%
# Five more paragraphs buy very little recall and cost twice the context.
assert result["recall@5"] <= recall_10 <= 1.0
assert recall_10 - result["recall@5"] < 0.02
assert mrr_10 >= result["mrr@5"]
