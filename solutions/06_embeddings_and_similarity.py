"""Worked solution: 06 Embeddings and similarity.

The source of truth for `06_embeddings_and_similarity_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: dot = Retriever(multi, 'paragraph', 'dot', topk=1, embed_keys=['sparse']) and chars =
Retriever(cmrc, 'paragraph', 'bm25_char', topk=1); for each question q, compare
dot(q.question)[0] with chars(q.question)[0]: same text? their .score values?

Marking same-formula:
- 2 points: the two agree on every question, first paragraph and score (share 1.0, largest gap
  0 up to rounding): the same formula. BM25 is a sum over the query's terms of a weight that
  depends on the term and the paragraph alone (idf and saturated term frequency); the sparse
  embedder stores exactly those weights in the paragraph's vector and the query's term counts in
  the query's vector, so their dot product is that sum. A sparse key is BM25 as an embedding: it
  goes where embeddings go — a vector store, a second key beside a dense one on the same
  document, fused with it.
- 1 point: "the same formula" without what the two vectors hold, or the explanation without a
  use.
- 0: the numbers only, or "they are similar".

Marking scales:
- 2 points: the dot product is a BM25 score (mean first score about 79; it grows with the
  query's terms and varies widely between questions), e5's cosine sits in a narrow band below 1
  (about 0.8 to 0.96): a sum would be decided by the sparse key alone, and no fixed weight puts
  the two on one scale for every query. Ranks are on one scale (Σ 1/(60 + rank)). What ranks
  give up: by how much a paragraph leads — a clear winner and a near tie count the same — and an
  equal vote cannot tell which key is right where they disagree (section 3: fusion's recall@1
  between the two keys'); choosing among the fused candidates takes a reranker.
- 1 point: one of the two halves.
- 0: "the scores are different" with no consequence.
"""

# %%
from course_lib import Document, Retriever, load_cmrc2018_kb, split_paragraphs
from course_lib.embeddings import CharNgramSparseEmbedder, default_embedder
from course_lib.lab.measure.evaluation import retrieve_all
from course_lib.lab.systems.pipelines import knowledge_base_document

kb = load_cmrc2018_kb()
sparse = Document(texts=kb.files, embed={"sparse": CharNgramSparseEmbedder()})
sparse.create_node_group("paragraph", transform=split_paragraphs)
cmrc = knowledge_base_document(kb)
chars_first = [r[0] for r in retrieve_all(kb, Retriever(cmrc, "paragraph", "bm25_char", topk=1))]


def compare(retriever, reference=chars_first):
    """(same first paragraph share, mean first score, largest first-score gap) against
    the reference's first paragraphs."""
    firsts = [r[0] for r in retrieve_all(kb, retriever)]
    same = sum(a.text == b.text for a, b in zip(firsts, reference, strict=True)) / len(firsts)
    mean = sum(a.score for a in firsts) / len(firsts)
    gap = max(abs(a.score - b.score) for a, b in zip(firsts, reference, strict=True))
    return same, mean, gap


dot = Retriever(sparse, "paragraph", "dot", topk=1, embed_keys=["sparse"])
same_first_share, mean_first_score, largest_score_gap = compare(dot)
print(same_first_share, mean_first_score, largest_score_gap)

# %%
# Same formula, same numbers: every question gets the same first paragraph with the same
# score, so the sparse dot product *is* BM25 on characters.
assert same_first_share == 1.0 and largest_score_gap < 1e-6
assert mean_first_score > 1.0  # a BM25 scale, not a cosine


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    def answers(values):
        return dict(zip(("same_first_share", "mean_first_score", "largest_score_gap"), values,
                        strict=True))

    multi = Document(texts=kb.files, embed={"dense": default_embedder(),
                                            "sparse": CharNgramSparseEmbedder()})
    multi.create_node_group("paragraph", transform=split_paragraphs)
    cosine = compare(Retriever(multi, "paragraph", "cosine", topk=1, embed_keys=["sparse"]))
    fused = compare(Retriever(multi, "paragraph", "dot", topk=1))
    words_first = [r[0] for r in retrieve_all(kb, Retriever(cmrc, "paragraph", "bm25_chinese",
                                                            topk=1))]
    words = compare(dot, reference=words_first)
    return {
        "Your scores are below 1: the cosine divides by the vectors' lengths. The exercise "
        "asks for the plain dot product (the 'dot' similarity).": answers(cosine),
        "Your scores are sums of 1/(60 + rank): with both embedding keys the retriever fuses "
        "the dense and the sparse key by reciprocal rank. Search the sparse key alone.":
            answers(fused),
        "You compared with BM25 on jieba words (bm25_chinese); the sparse embedder's terms "
        "are character n-grams: compare with bm25_char.":
            {"same_first_share": words[0], "largest_score_gap": words[2]},
    }
