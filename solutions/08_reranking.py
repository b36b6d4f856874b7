"""Worked solution: 08 Reranking.

The source of truth for `08_reranking_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import evaluate, knowledge_base_document, load_cmrc2018_kb
from course_lib.fusion import MultiRetriever
from course_lib.pipelines import paragraph_paths, rerank_after
from course_lib.rerank import FeatureReranker, Reranker

kb = load_cmrc2018_kb()
doc = knowledge_base_document(kb, embed=True)
lexical = FeatureReranker(embedder=None)
lexical.prepare([n.text for n in doc.get_nodes("paragraph")])
pipeline = rerank_after(MultiRetriever(paragraph_paths(doc)), Reranker(model=lexical, topk=5))
lexical_only_mrr_5 = evaluate(kb, pipeline)["mrr@5"]
full_mrr_5 = evaluate(kb, "multipath-rerank")["mrr@5"]
print(lexical_only_mrr_5, full_mrr_5)

# %%
# The dense signals help, but most of the work is lexical on this data.
assert 0.97 < lexical_only_mrr_5 < full_mrr_5
