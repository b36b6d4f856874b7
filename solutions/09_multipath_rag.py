"""Worked solution: 09 Multi-path RAG.

The source of truth for `09_multipath_rag_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: on each sample (every fifth question of trial, then of the held-out dev set, each with
its own chapter_rag(..., llm=OfflineLLM())), for each question q: best =
rag.reranker(q.question, candidates)[0], where the candidates are rag.retriever(q.question) —
for the unanswerable case without those whose metadata['file_name'] == q.file_name (none left:
coverage 0); its coverage is term_coverage(q.question, best.text), and the rule answers when it
is >= the threshold. On trial, among the GRID values that answer at least MIN_KEPT of the
answerable questions, chosen_coverage is the one that refuses the most; dev_kept and
dev_refused are the two shares at chosen_coverage on dev's sample.

Marking absolute-signal:
- 2 points: the reranker's score is relative to its pool: it says which candidate stands out,
  not whether any holds the answer, and an unrelated paragraph can stand out (section 7: the
  colourless gas that shares 沸点). Term coverage is absolute — the share of the question's
  content terms the text holds, comparable between questions — so a threshold on it can mean "the
  knowledge base lacks this". Dropping the whole file: coarse chunks and the file's other
  paragraphs carry the gold paragraph's text (a chunk spans paragraphs), so removing only the
  paragraph leaves the answer in the candidates: the question would not be unanswerable, and
  the refused share would be measured on wrong labels.
- 1 point: one of the two.
- 0: "coverage is more accurate", with no relative/absolute distinction.

Marking promise-on-dev:
- 2 points: chosen on trial, 0.6 (trial: kept 0.920, refused 0.840); on dev kept 0.911 — the
  promise of at least 0.9 holds, narrowly — and refused 0.767, about 7 points below trial.
  Trial's shares were read on the questions that chose the threshold, so they flatter it; dev
  chose nothing. The gap is between two question sets (200 and 180 questions): no paired test
  applies, and with so few questions each share is uncertain by several points, so it may be
  chance or dev being harder; more dev questions (or an interval on each share) would tell.
- 1 point: the numbers and a verdict without the reasons, or the reasons without the numbers.
- 0: reports trial's shares, or runs a paired test across the two sets.
"""

# %%
from course_lib import load_cmrc2018_kb
from course_lib.lab.data.datasets import load_held_out_kb
from course_lib.lab.systems.chapter_system import chapter_rag
from course_lib.llm import OfflineLLM
from course_lib.offline_llm import term_coverage

GRID = (0.4, 0.5, 0.6, 0.7, 0.8)
MIN_KEPT = 0.9  # the rule must answer at least this share of answerable questions


def sample(knowledge_base):
    """(system, every fifth question, each question's candidates from every path, once)."""
    rag = chapter_rag(knowledge_base, llm=OfflineLLM())
    questions = knowledge_base.questions[::5]
    return rag, questions, {q.id: rag.retriever(q.question) for q in questions}


def best(split, q, keep=lambda node: True):
    """The reranker's first candidate among those ``keep`` accepts (None if none)."""
    rag, _, candidates = split
    kept = [n for n in candidates[q.id] if keep(n)]
    return rag.reranker(q.question, kept)[0] if kept else None


def coverage(q, node):
    return 0.0 if node is None else term_coverage(q.question, node.text)


def other_file(q):
    return lambda node: node.metadata["file_name"] != q.file_name


def coverages(split, pick=best, score=coverage, removed=other_file):
    """Per sample question, the coverage of its best candidate: with the answer in the
    knowledge base, and with the gold paragraph's file taken out."""
    questions = split[1]
    return ([score(q, pick(split, q)) for q in questions],
            [score(q, pick(split, q, removed(q))) for q in questions])


def shares(scores, threshold, answers=lambda c, t: c >= t):
    """(share of answerable questions answered, share of unanswerable ones refused)."""
    answerable, unanswerable = scores
    return (sum(answers(c, threshold) for c in answerable) / len(answerable),
            sum(not answers(c, threshold) for c in unanswerable) / len(unanswerable))


def choose(scores, answers=lambda c, t: c >= t):
    """Among the thresholds answering at least MIN_KEPT, the one refusing the most (None
    when no threshold answers that many)."""
    allowed = [t for t in GRID if shares(scores, t, answers)[0] >= MIN_KEPT]
    return max(allowed, key=lambda t: shares(scores, t, answers)[1], default=None)


trial, dev = sample(load_cmrc2018_kb()), sample(load_held_out_kb())
trial_scores, dev_scores = coverages(trial), coverages(dev)
chosen_coverage = choose(trial_scores)                           # chosen on trial ...
dev_kept, dev_refused = shares(dev_scores, chosen_coverage)      # ... reported on dev
for threshold in GRID:
    print(f"threshold {threshold}: trial kept, refused "
          + "{:.3f}, {:.3f}".format(*shares(trial_scores, threshold))
          + "; dev {:.3f}, {:.3f}".format(*shares(dev_scores, threshold)))
print("chosen on trial:", chosen_coverage, "dev:", dev_kept, dev_refused)

# %%
# The rule keeps its promise on dev (it still answers at least 90 % of the answerable
# questions there) and refuses fewer unanswerable ones than on trial — two question sets, so
# no paired test says why; the numbers to report are dev's, which chose nothing.
trial_kept, trial_refused = shares(trial_scores, chosen_coverage)
assert dev_kept >= MIN_KEPT and dev_refused < trial_refused
assert all(c > 0 for c in trial_scores[0] + dev_scores[0])  # every question has a candidate


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    def answers(trial_with, dev_with, rule=lambda c, t: c >= t):
        # a method under which no threshold qualifies leaves the right one in place
        chosen = choose(trial_with, rule) or chosen_coverage
        kept, refused = shares(dev_with, chosen, rule)
        return {"chosen_coverage": chosen, "dev_kept": kept, "dev_refused": refused}

    def both(**how):
        return answers(coverages(trial, **how), coverages(dev, **how))

    def reversed_coverage(q, node):
        return 0.0 if node is None else term_coverage(node.text, q.question)

    def first_unranked(split, q, keep=lambda node: True):
        return next((node for node in split[2][q.id] if keep(node)), None)

    def highest_coverage(split, q, keep=lambda node: True):
        return max((node for node in split[2][q.id] if keep(node)),
                   key=lambda node: coverage(q, node), default=None)

    best_sum = max(GRID, key=lambda t: sum(shares(trial_scores, t)))
    return {
        "Both shares are near the extremes: you measured the candidate's terms found in the "
        "question. The rule wants the question's terms found in the candidate; the coverage "
        "function's docstring says which argument is which.":
            both(score=reversed_coverage),
        "You removed only the gold paragraph: coarse chunks and the other paragraphs of the "
        "same file still carry its text. Drop every candidate from the question's own file "
        "(a node's metadata names its file).":
            both(removed=lambda q: (lambda node: node.text != q.paragraph)),
        "Your best candidate is the first of the union (the order the paths found them in); "
        "the system's best is the reranker's first: rerank (what is left of) the candidates.":
            both(pick=first_unranked),
        "You took the candidate with the highest coverage; the rule looks only at the one the "
        "system would rank first (the reranker's first), as a refusal step after reranking "
        "would.":
            both(pick=highest_coverage),
        "'At least' includes a coverage equal to the threshold: answer when the coverage "
        "reaches the threshold, refuse when it is below.":
            answers(trial_scores, dev_scores, rule=lambda c, t: c > t),
        "For the knowledge base without the answer, report the share the rule refuses "
        "(coverage below the threshold), not the share it answers.":
            {"dev_refused": 1 - dev_refused},
        "Those are trial's shares, read on the questions that chose the threshold; report the "
        "chosen threshold on dev's sample.":
            {"dev_kept": trial_kept, "dev_refused": trial_refused},
        "The rule is a constraint, then a choice: first keep the thresholds that answer at "
        "least 90 % of the answerable questions, then refuse the most among those.":
            {"chosen_coverage": best_sum, "dev_kept": shares(dev_scores, best_sum)[0],
             "dev_refused": shares(dev_scores, best_sum)[1]},
    }
