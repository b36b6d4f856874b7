"""Worked solution: 09 Multi-path RAG.

The source of truth for `09_multipath_rag_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: for each sample question q: best = offline_rag.reranker(q.question, candidates)[0],
where the candidates are offline_rag.retriever(q.question) — for the second share without those
whose metadata['file_name'] == q.file_name; the rule answers when term_coverage(q.question,
best.text) >= MIN_COVERAGE.
"""

# %%
from course_lib import load_cmrc2018_kb
from course_lib.lab.chapter_system import chapter_rag
from course_lib.llm import OfflineLLM
from course_lib.offline_llm import term_coverage

kb = load_cmrc2018_kb()
offline_rag = chapter_rag(kb, llm=OfflineLLM())
sample_questions = kb.questions[::5]
MIN_COVERAGE = 0.6

# The candidates of every path, once per question (reranking is what the rule varies).
candidates = {q.id: offline_rag.retriever(q.question) for q in sample_questions}


def best(q, keep=lambda node: True):
    """The reranker's first candidate among those ``keep`` accepts (None if none)."""
    kept = [n for n in candidates[q.id] if keep(n)]
    return offline_rag.reranker(q.question, kept)[0] if kept else None


def coverage(q, node):
    return 0.0 if node is None else term_coverage(q.question, node.text)


def other_file(q):
    return lambda node: node.metadata["file_name"] != q.file_name


best_of_all = {q.id: best(q) for q in sample_questions}
best_of_others = {q.id: best(q, other_file(q)) for q in sample_questions}
answerable = [coverage(q, best_of_all[q.id]) for q in sample_questions]
unanswerable = [coverage(q, best_of_others[q.id]) for q in sample_questions]
kept_answerable = sum(c >= MIN_COVERAGE for c in answerable) / len(sample_questions)
refused_unanswerable = sum(c < MIN_COVERAGE for c in unanswerable) / len(sample_questions)
print("answered when the knowledge base holds the answer:", kept_answerable)
print("refused when it does not:                        ", refused_unanswerable)
for threshold in (0.4, 0.5, 0.6, 0.7, 0.8):  # the trade-off
    kept = sum(c >= threshold for c in answerable) / len(sample_questions)
    refused = sum(c < threshold for c in unanswerable) / len(sample_questions)
    print(f"MIN_COVERAGE {threshold}: kept {kept:.3f}, refused {refused:.3f}")

# %%
# The signal separates the two cases far better than chance, though not perfectly: another
# paragraph on a similar topic can cover most of a question's words.
assert kept_answerable > 0.85 and refused_unanswerable > 0.75
assert all(c is not None for c in answerable)


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    n = len(sample_questions)

    def shares(answerable_scores, unanswerable_scores, answer=lambda c: c >= MIN_COVERAGE):
        return {"kept_answerable": sum(map(answer, answerable_scores)) / n,
                "refused_unanswerable": sum(not answer(c) for c in unanswerable_scores) / n}

    def reversed_coverage(q, node):
        return 0.0 if node is None else term_coverage(node.text, q.question)

    def first_unranked(q, keep=lambda node: True):
        return next((node for node in candidates[q.id] if keep(node)), None)

    def highest_coverage(q, keep=lambda node: True):
        return max((coverage(q, node) for node in candidates[q.id] if keep(node)), default=0.0)

    only_paragraph = [coverage(q, best(q, lambda node, q=q: node.text != q.paragraph))
                      for q in sample_questions]
    return {
        "Both shares are near the extremes: you measured the candidate's terms found in the "
        "question. The rule wants the question's terms found in the candidate; the coverage "
        "function's docstring says which argument is which.":
            shares([reversed_coverage(q, best_of_all[q.id]) for q in sample_questions],
                   [reversed_coverage(q, best_of_others[q.id]) for q in sample_questions]),
        "You removed only the gold paragraph: coarse chunks and the other paragraphs of the "
        "same file still carry its text. Drop every candidate from the question's own file "
        "(a node's metadata names its file).":
            shares(answerable, only_paragraph),
        "Your best candidate is the first of the union (the order the paths found them in); "
        "the system's best is the reranker's first: rerank (what is left of) the candidates.":
            shares([coverage(q, first_unranked(q)) for q in sample_questions],
                   [coverage(q, first_unranked(q, other_file(q))) for q in sample_questions]),
        "You took the candidate with the highest coverage; the rule looks only at the one the "
        "system would rank first (the reranker's first), as a refusal step after reranking "
        "would.":
            shares([highest_coverage(q) for q in sample_questions],
                   [highest_coverage(q, other_file(q)) for q in sample_questions]),
        "'At least MIN_COVERAGE' includes a coverage of exactly 0.6: answer when "
        "coverage >= MIN_COVERAGE, refuse when it is below.":
            shares(answerable, unanswerable, answer=lambda c: c > MIN_COVERAGE),
        "For the knowledge base without the answer, report the share the rule refuses "
        "(coverage below MIN_COVERAGE), not the share it answers.":
            {"refused_unanswerable": 1 - refused_unanswerable},
    }
