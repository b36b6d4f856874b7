"""Worked solution: 12 Knowing when to say no.

The source of truth for `12_knowing_when_to_say_no_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
import numpy as np

from course_lib import load_cmrc2018_kb
from course_lib.answerability import fit_model
from course_lib.lab.answerability_evaluation import (
    answerability_set,
    cross_validate,
    retrieve_candidates,
    signal_table,
)

kb = load_cmrc2018_kb()
data = answerability_set(kb, held_out=0.3, folds=5, seed=0)
signals = signal_table(data, retrieve_candidates(data))
MAX_WRONG = 0.02

matrix = np.column_stack(list(signals.values()))  # one row per question, one column per signal
answerable = np.array(data.answerable)
folds = np.array(data.folds)
declined = np.zeros(len(answerable), dtype=bool)
for fold in range(data.n_folds):
    report = folds == fold  # scored now; the other folds calibrate
    model = fit_model(matrix[~report], answerable[~report], max_wrong=MAX_WRONG)
    declined[report] = model.probabilities(matrix[report]) < model.threshold
declined_at_2 = float(declined[~answerable].mean())         # among the unanswerable
wrongly_declined_at_2 = float(declined[answerable].mean())  # among the answerable
print(f"promise ≤ 2 %: declined {declined_at_2:.1%} of unanswerable, "
      f"{wrongly_declined_at_2:.1%} of answerable questions")

# %%
# The library's cross_validate runs the same loop.
check = cross_validate(data, signals, max_wrong=MAX_WRONG)
assert (check.declined_share, check.wrongly_declined_share) == (declined_at_2,
                                                                wrongly_declined_at_2)
# A stricter promise declines fewer unanswerable questions: the price of 5 % → 2 %.
at_5 = cross_validate(data, signals, max_wrong=0.05)
assert declined_at_2 < at_5.declined_share and wrongly_declined_at_2 < 0.035


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    from course_lib.answerability import choose_threshold

    def shares(declined_now):
        return {"declined_at_2": float(declined_now[~answerable].mean()),
                "wrongly_declined_at_2": float(declined_now[answerable].mean())}

    def by_folds(fold_of, columns=None, max_wrong=MAX_WRONG, threshold_on_report=False):
        use = matrix if columns is None else matrix[:, columns]
        out = np.zeros(len(answerable), dtype=bool)
        for fold in range(data.n_folds):
            report = fold_of == fold
            model = fit_model(use[~report], answerable[~report], max_wrong=max_wrong)
            scores = model.probabilities(use[report])
            threshold = (choose_threshold(scores[answerable[report]], max_wrong)
                         if threshold_on_report else model.threshold)
            out[report] = scores < threshold
        return out

    everything = fit_model(matrix, answerable, max_wrong=MAX_WRONG)
    in_sample = everything.probabilities(matrix) < everything.threshold
    right = shares(declined)
    return {
        "You fitted and chose the threshold on all questions, then scored the same ones: "
        "fit on the calibration folds (folds != fold) and decide only the report fold.":
            shares(in_sample),
        "You chose each threshold on the report fold's own answerable questions: take the "
        "model's threshold (model.threshold), which comes from the calibration folds.":
            shares(by_folds(folds, threshold_on_report=True)),
        "These are the shares for max_wrong=0.05: pass max_wrong=MAX_WRONG (0.02) to "
        "fit_model.":
            shares(by_folds(folds, max_wrong=0.05)),
        "You dealt the questions into folds one by one: use data.folds, which keeps all "
        "questions of a paragraph in one fold.":
            shares(by_folds(np.arange(len(answerable)) % data.n_folds)),
        "You used only the word coverage: the detector uses all three signals "
        "(np.column_stack(list(signals.values()))).":
            shares(by_folds(folds, columns=[0])),
        "The two shares are swapped: declined_at_2 is the share of the *unanswerable* "
        "questions declined, wrongly_declined_at_2 that of the answerable ones.":
            {"declined_at_2": right["wrongly_declined_at_2"],
             "wrongly_declined_at_2": right["declined_at_2"]},
        "Each share is over its own kind of question, not over all 1,000: declined ones "
        "among the unanswerable, and among the answerable.":
            {"declined_at_2": float((declined & ~answerable).sum() / len(answerable)),
             "wrongly_declined_at_2": float((declined & answerable).sum() / len(answerable))},
    }
