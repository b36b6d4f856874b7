"""Worked solution: 06 Embeddings and similarity.

The source of truth for `06_embeddings_and_similarity_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import Document, Retriever, evaluate, load_cmrc2018_kb, split_paragraphs
from course_lib.embeddings import CharNgramSparseEmbedder

kb = load_cmrc2018_kb()
multi = Document(texts=kb.files, embed={"sparse": CharNgramSparseEmbedder()})
multi.create_node_group("paragraph", transform=split_paragraphs)
result = evaluate(kb, Retriever(multi, "paragraph", "dot", topk=5, embed_keys=["sparse"]))
sparse_dot_recall_1 = result["recall@1"]
char_bm25 = evaluate(kb, "bm25-char-paragraph")
print(sparse_dot_recall_1, char_bm25["recall@1"])

# %%
# Same formula, same ranking: the dot product of these sparse vectors is BM25.
assert sparse_dot_recall_1 == char_bm25["recall@1"]
assert result["mrr@5"] == char_bm25["mrr@5"]
