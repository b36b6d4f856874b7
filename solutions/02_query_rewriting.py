"""Worked solution: 02 Query rewriting.

The source of truth for `02_query_rewriting_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: bm25 = lambda k: Retriever(doc, 'paragraph', 'bm25_chinese', topk=k); for each pair (a,
b), texts = {n.text for n in retrieve(a.question + b.question)}; it counts when a.paragraph in
texts and b.paragraph in texts; share = count / len(pairs), for retrieve = bm25(2) and retrieve
= SubQuestionRetriever(bm25(1), OfflineLLM()).

Marking sub-questions:
- 2 points: plain BM25 scores each paragraph by the sum over all of the glued question's terms,
  so the half with more or rarer terms dominates: its paragraph (and one close to it) can take
  both slots while the other half's paragraph is left out. Splitting gives each need its own
  search and its own slot (top 1 each): 0.92 of the pairs against 0.88 (46 against 44 of 50).
  Going wrong: a split at the wrong place or none (the offline stand-in splits at question marks;
  an LLM can paraphrase or drop a part), a sub-question that is vague without the other half,
  a need that takes two paragraphs, and one model call more per question.
- 1 point: the mechanism without the slots, or no way it can go wrong.
- 0: "more queries find more" (both hand over two paragraphs), or no mechanism.

Marking fifty-pairs:
- 2 points: only the pairs where the two methods disagree count; all going one way, 5 give
  exact McNemar p 0.0625 and 6 give 0.031, so at least 6 (more if any goes the other way). The
  result is decided by 2 pairs (44 against 46 of 50, p 0.5 at best): a direction, not a finding.
  Before claiming anything: fix the comparison in advance and run it on many more pairs, and on
  the held-out dev set.
- 1 point: the right count without reading the result, or the reading without the count.
- 0: compares 0.88 with 0.92 as if 4 points were a finding, or tests the two totals unpaired.
"""

# %%
from course_lib import Retriever, knowledge_base_document, load_cmrc2018_kb
from course_lib.llm import OfflineLLM
from course_lib.rewriting import SubQuestionRetriever

kb = load_cmrc2018_kb()
doc = knowledge_base_document(kb)


def bm25(topk):
    return Retriever(doc, "paragraph", "bm25_chinese", topk=topk)


def shares(plain, sub, pairs, both=True):
    """For each retriever, the share of pairs whose glued question gets both gold
    paragraphs back (with ``both=False``: at least one of them)."""
    rule = all if both else any

    def share(retrieve):
        return sum(rule(gold in {n.text for n in retrieve(a.question + b.question)}
                        for gold in (a.paragraph, b.paragraph)) for a, b in pairs) / len(pairs)

    return share(plain), share(sub)


pairs = [(kb.questions[i], kb.questions[i + 500]) for i in range(0, 100, 2)]
plain_share, sub_share = shares(bm25(2), SubQuestionRetriever(bm25(1), OfflineLLM()), pairs)
print(plain_share, sub_share)

# %%
# Splitting lets each need claim its own slot: here 46 pairs against 44 of 50. Two pairs
# decide, too few for a paired test (at best exact McNemar p = 0.5): read it as a direction
# to test on more pairs, and on dev, not as a finding.
assert sub_share > plain_share


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    sub1 = SubQuestionRetriever(bm25(1), OfflineLLM())

    def answers(plain, sub, pairs=pairs, both=True):
        return dict(zip(("plain_share", "sub_share"), shares(plain, sub, pairs, both),
                        strict=True))

    return {
        "Your plain BM25 returned 1 paragraph for two needs: let it return its top 2, as many "
        "as the two sub-questions bring together.": answers(bm25(1), sub1),
        "Each of your sub-questions retrieved 2 paragraphs (4 in all): give SubQuestionRetriever "
        "a top-1 retriever, so both methods hand over 2 paragraphs.":
            answers(bm25(2), SubQuestionRetriever(bm25(2), OfflineLLM())),
        "You counted the pairs where either gold paragraph was retrieved; count only those "
        "where both are.": answers(bm25(2), sub1, both=False),
        "You glued neighbouring questions (one and the next), which often ask about the same "
        "paragraph; glue each question with the one 500 places later.":
            answers(bm25(2), sub1, [(kb.questions[i], kb.questions[i + 1])
                                    for i in range(0, 100, 2)]),
        "You made 100 pairs (every one of the first 100 questions); the exercise takes every "
        "second one: 50 pairs.":
            answers(bm25(2), sub1, [(kb.questions[i], kb.questions[i + 500])
                                    for i in range(100)]),
    }
