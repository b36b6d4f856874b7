"""Worked solution: 11 Scaling out.

The source of truth for `11_scaling_out_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%

from course_lib import Document, load_cmrc2018_kb, split_paragraphs
from course_lib.embeddings import default_embedder
from course_lib.vectors import DenseVectors

kb = load_cmrc2018_kb()
doc = Document(texts=kb.files, embed={"use": default_embedder()})
doc.create_node_group("paragraph", transform=split_paragraphs)
paragraph_vectors = doc.embeddings("paragraph", "use")
question_vectors = default_embedder()([q.question for q in kb.questions])
exact = DenseVectors(paragraph_vectors, backend="faiss")
approximate = DenseVectors(paragraph_vectors, backend="hnsw", ef_search=10)
found = sum(len(set(exact.search(q, 10)[0]) & set(approximate.search(q, 10)[0]))
            for q in question_vectors)
hnsw_recall_at_10 = found / (10 * len(question_vectors))
print(hnsw_recall_at_10)

# %%
# A small search beam misses some true neighbours even on 256 vectors.
assert 0.5 < hnsw_recall_at_10 <= 1.0
