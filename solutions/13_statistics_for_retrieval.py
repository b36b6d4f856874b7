"""Worked solution: 13 Statistics for retrieval.

The source of truth for `13_statistics_for_retrieval_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: evaluate both pipelines on load_held_out_kb(); take their per-question 'mrr@5'
columns; paired_difference(hybrid, e5, clusters=[q.paragraph for q in dev.questions])
gives the interval's low and high.

Marking clusters:
- 2 points: the difference is +0.0087; resampling paragraphs gives about −0.0007 to +0.019,
  which contains 0 (not detectable); resampling questions gives about +0.0012 to +0.0167, which
  excludes it. A paragraph's questions (about 3.5 on dev) share its difficulty — a paragraph one
  pipeline misreads costs it all of them — so the 898 questions are not 898 independent draws:
  resampling them one by one understates the variation; resampling the 256 paragraphs keeps
  them together, so the interval is wider, and honest. Report the paragraph one.
- 1 point: the right choice with a vague reason ("more conservative"), or the reason without the
  choice.
- 0: reports the question one because it excludes 0.

Marking not-detectable:
- 2 points: may write: no detectable difference in MRR@5 on dev — these questions could not
  tell; the estimate leans to the hybrid (+0.0087) and the interval allows anything from a tiny
  loss to about +0.02. May not write: "no difference", nor "the hybrid is better". To settle it:
  more questions on more paragraphs (new paragraphs add independent evidence; more questions on
  the same paragraphs add little), with the test fixed in advance — enough for the power a
  difference this small needs (section 3: a point takes thousands of questions) — not another
  look at trial, nor a switch to the narrower interval.
- 1 point: "not significant" read as "no difference", or what to do without what it means.
- 0: claims the hybrid is ahead.
"""

# %%
from course_lib import evaluate
from course_lib.lab.data.datasets import load_held_out_kb
from course_lib.lab.measure.significance import paired_difference

dev = load_held_out_kb()
hybrid = evaluate(dev, "hybrid-rrf", with_intervals=False)["per_question"]
e5 = evaluate(dev, "cosine-paragraph", with_intervals=False)["per_question"]
paragraphs = [q.paragraph for q in dev.questions]
by_paragraph = paired_difference(hybrid["mrr@5"], e5["mrr@5"], clusters=paragraphs)
low, high = by_paragraph["low"], by_paragraph["high"]
by_question = paired_difference(hybrid["mrr@5"], e5["mrr@5"])
print(f"hybrid-rrf − cosine-paragraph, MRR@5 on dev: {by_paragraph['difference']:+.4f}; "
      f"paragraphs [{low:+.4f}, {high:+.4f}], questions [{by_question['low']:+.4f}, "
      f"{by_question['high']:+.4f}]")

# %%
# Resampling questions, the interval excludes zero; keeping paragraphs together, it does not:
# the hybrid's lead over e5 in MRR@5 is not detectable on dev.
assert low < 0 < high and by_question["low"] > 0


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    from course_lib import load_cmrc2018_kb

    by_file = paired_difference(hybrid["mrr@5"], e5["mrr@5"],
                                clusters=[q.file_name for q in dev.questions])
    recall = paired_difference(hybrid["recall@1"], e5["recall@1"], clusters=paragraphs)
    reversed_ = paired_difference(e5["mrr@5"], hybrid["mrr@5"], clusters=paragraphs)
    trial = load_cmrc2018_kb()
    on_trial = paired_difference(
        evaluate(trial, "hybrid-rrf", with_intervals=False)["per_question"]["mrr@5"],
        evaluate(trial, "cosine-paragraph", with_intervals=False)["per_question"]["mrr@5"],
        clusters=[q.paragraph for q in trial.questions])

    def ends(row):
        return {"low": row["low"], "high": row["high"]}

    return {
        "The interval resamples single questions; the exercise resamples whole paragraphs, "
        "whose questions rise and fall together (section 2).": ends(by_question),
        "The clusters are the knowledge base's files of ten paragraphs; the exercise's cluster "
        "is each question's own paragraph.": ends(by_file),
        "That is recall@1; the exercise reports MRR@5.": ends(recall),
        "The difference is the wrong way round: the hybrid minus e5.": ends(reversed_),
        "Those are trial's questions; report on the held-out dev set.": ends(on_trial),
    }
