"""Worked solution: 01 Evaluating retrieval.

The source of truth for `01_evaluating_retrieval_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: a Retriever with topk=10, then evaluate(kb, retriever, ks=(5, 10)).

Marking top-10:
- 2 points: reads the numbers — recall@10 0.995 against recall@5 0.989, so 6 more of the 1,000
  questions get their gold paragraph — and weighs them against the cost, paid on every question:
  five more paragraphs, about twice the characters for the generator to read (and pay for, and be
  distracted by); context relevance about halves. MRR@10 (0.9771) is hardly above MRR@5
  (0.9763): a gold paragraph first found at rank 6 to 10 adds at most 1/6, so 6 such questions
  add at most 0.001. Verdict: not worth it with this retriever on CMRC (it would be where recall@5
  is low, or with a reranker to choose among the 10).
- 1 point: the numbers and a verdict without the cost, or without why MRR barely moves.
- 0: "10 is better because recall is higher", or numbers only.

Marking paired-test:
- 2 points: no test is needed, nor informative: the top 10 contains the top 5, so no question
  found at 5 can be lost at 10 — every disagreement goes one way by construction, and a test
  of "either could win" restates that (6 to 0 gives p 0.031). What is uncertain is how large
  the gain is on other questions of the kind: an exact interval on 6 of 1,000 (about 0.2 % to
  1.3 %), or the same measurement on dev.
- 1 point: says the test is pointless (or that it would always come out "significant") without
  the nesting, or the nesting without what remains uncertain.
- 0: runs or recommends the test as evidence that 10 is better, or compares the two totals
  unpaired.
"""

# %%
from course_lib import Retriever, evaluate, knowledge_base_document, load_cmrc2018_kb
from course_lib.lab.measure.evaluation import score_rankings

kb = load_cmrc2018_kb()
doc = knowledge_base_document(kb)
retriever = Retriever(doc, "paragraph", "bm25_chinese", topk=10)
result = evaluate(kb, retriever, ks=(5, 10))
recall_10, mrr_10 = result["recall@10"], result["mrr@10"]
print(recall_10, mrr_10, "vs recall@5", result["recall@5"])

# %%
# Five more paragraphs buy very little recall and cost twice the context.
assert result["recall@5"] <= recall_10 <= 1.0
assert recall_10 - result["recall@5"] < 0.02
assert mrr_10 >= result["mrr@5"]


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    top5 = evaluate(kb, Retriever(doc, "paragraph", "bm25_chinese", topk=5), ks=(5,))
    chunks = evaluate(kb, Retriever(doc, "CoarseChunk", "bm25_chinese", topk=10), ks=(10,))
    lazyllm = evaluate(kb, Retriever(doc, "paragraph", "bm25_lazyllm", topk=10), ks=(10,))
    worst_first = score_rankings(kb.questions,
                                 [retriever(q.question)[::-1] for q in kb.questions], ks=(10,))
    return {
        "These are recall@5 and MRR@5: the retriever must return 10 paragraphs, and evaluate "
        "must score at 10 as well as at 5.":
            {"recall_10": top5["recall@5"], "mrr_10": top5["mrr@5"]},
        "You retrieved CoarseChunk chunks (the naive baseline); the exercise retrieves whole "
        "paragraphs: the 'paragraph' group.":
            {"recall_10": chunks["recall@10"], "mrr_10": chunks["mrr@10"]},
        "You used LazyLLM's tokenisation (bm25_lazyllm); the exercise uses the course's "
        "bm25_chinese.":
            {"recall_10": lazyllm["recall@10"], "mrr_10": lazyllm["mrr@10"]},
        "Recall is right but MRR@10 is far too low: your list is ranked worst first. Keep the "
        "Retriever's order (highest score first).":
            {"recall_10": worst_first["recall@10"], "mrr_10": worst_first["mrr@10"]},
    }
