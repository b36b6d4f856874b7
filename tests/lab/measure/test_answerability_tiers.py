"""The harder tiers of unanswerable questions, anchored coverage, and the statistics that
compare detectors (issue: "not in the knowledge base" on hard questions)."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from course_lib.answerability import CLASSIC_SIGNALS, SIGNALS, AnswerabilityDetector
from course_lib.lab.data.datasets import Question
from course_lib.lab.measure import answerability_evaluation as ans_eval
from course_lib.lab.measure import answerability_tiers as ans_tiers
from course_lib.lab.measure.answerability_evaluation import (
    auroc,
    auroc_interval,
    bootstrap_p,
    paired_auroc_difference,
)
from course_lib.lab.measure.answerability_tiers import (
    Facts,
    answerability_tiers,
    compare_detectors,
    fold_lesson,
    mixed_stream,
    question_subject,
    step_rows,
    stream_sample,
    swap_subject,
)
from course_lib.word_tags import function_words, named_entities

LUO = "罗保铭，1952年出生，1977年毕业于天津师范大学中文系，曾任海南省省长。"
LI = "李白是唐代诗人，字太白，生于碎叶城。"


def _question(text, paragraph, answers):
    return Question("q", text, answers, [paragraph.index(answers[0])], "p", paragraph)


# ---------------------------------------------------------------- names and function words
def test_names_and_function_words_come_from_jieba_tags():
    assert named_entities("《茶经》的作者陆羽是哪里人？") == [("茶经", "title"), ("陆羽", "person")]
    assert ("AGG01", "latin") in named_entities("AGG01的实际功效有哪些？")
    assert "agg01" not in function_words("AGG01的实际功效有哪些？")  # "eng" is not "e"
    assert {"于", "哪", "所"} <= function_words("罗保铭本科毕业于哪所大学？")
    assert not {"罗保铭", "本科", "毕业", "大学"} & function_words("罗保铭本科毕业于哪所大学？")


# ---------------------------------------------------------------- subjects and swaps
def test_the_subject_is_the_rarest_name_its_paragraph_holds():
    facts = Facts([LUO, LI, "天津是一座城市。"])
    question = _question("罗保铭在天津读的什么专业？", LUO, ["中文系"])
    assert question_subject(question, facts) == ("罗保铭", "person")  # 天津: two paragraphs
    assert question_subject(_question("此剧的制作人是谁？", LI, ["李白"]), facts) is None


def test_a_swap_takes_a_name_of_the_same_kind_never_stated_with_the_answer():
    facts = Facts([LUO, LI, "杜甫也毕业于天津师范大学。"])
    question = _question("罗保铭毕业于哪所大学？", LUO, ["天津师范大学"])
    pool = [("李白", "person"), ("杜甫", "person"), ("北京", "place")]
    # 杜甫 is stated with the answer: only 李白 qualifies (北京 is another kind).
    assert swap_subject(question, ("罗保铭", "person"), pool, facts) == ("李白毕业于哪所大学？",
                                                                        "李白")
    assert swap_subject(question, ("罗保铭", "person"), pool[1:], facts) is None
    assert Facts([LUO]).states("罗保铭", ["天津师范大学"])


@pytest.fixture(scope="module")
def tiered(cmrc_kb):
    return answerability_tiers(cmrc_kb)


def test_tiers_on_cmrc_are_labelled_and_folded_as_documented(tiered):
    everything = tiered.all
    assert {k: len(v) for k, v in tiered.tiers.items()} == {
        "absent paragraph": 309, "topic present": 40, "swapped subject": 494}
    kept = Facts(everything.kb.paragraphs)
    for tier, members in tiered.tiers.items():
        assert not any(everything.answerable[i] for i in members), tier
    for i in tiered.tiers["topic present"]:
        name, _ = tiered.subjects[i]
        assert kept.mention(name) and not kept.states(name, everything.questions[i].answers)
    for j, i in tiered.swapped_from.items():
        old, new = tiered.swaps[j]
        original, swapped = everything.questions[i], everything.questions[j]
        assert everything.answerable[i] and swapped.question == original.question.replace(old, new)
        assert everything.folds[j] == everything.folds[i]  # a swap stays in its fold
        assert new not in original.paragraph and not kept.states(new, original.answers)


def test_tiers_are_seeded(cmrc_kb, tiered):
    again = answerability_tiers(cmrc_kb)
    assert [q.question for q in again.all.questions] == [q.question for q in tiered.all.questions]
    other = answerability_tiers(cmrc_kb, seed=1)
    assert [q.question for q in other.all.questions] != [q.question for q in tiered.all.questions]


# ---------------------------------------------------------------- anchored coverage
def test_anchored_coverage_wants_every_name_in_the_same_line_as_the_rest():
    detector = AnswerabilityDetector([LUO, LI], embedder=None,
                                     signals=["word_coverage", "anchored_coverage"])
    question = "罗保铭毕业于哪所大学？"
    other = "杜甫毕业于哪所大学？他毕业于北京大学。"  # the words, not the name
    assert detector.signals(question, [LUO]).values["anchored_coverage"] == 1.0
    split = detector.signals(question, ["罗保铭是省长。\n毕业于大学。"])
    assert split.values["anchored_coverage"] < 1.0 > split.values["word_coverage"]
    swapped = detector.signals(question, [other])
    assert swapped.values["anchored_coverage"] == 0.0 < swapped.values["word_coverage"]
    evidence = detector.signals(question, [other, LUO])
    assert (evidence.best_rank, evidence.anchors) == (2, ["罗保铭"])
    assert "于" in evidence.ignored and "于" not in evidence.missing + evidence.found


def test_a_question_without_names_needs_no_anchor():
    detector = AnswerabilityDetector([LI], embedder=None, signals=["anchored_coverage"])
    assert detector.signals("诗人生于哪里？", [LI]).values["anchored_coverage"] > 0.9


# ---------------------------------------------------------------- statistics
def test_the_paired_auroc_interval_agrees_with_scipys_bootstrap_for_single_questions():
    rng = np.random.default_rng(1)
    labels = rng.random(300) < 0.6
    a = labels + rng.normal(0, 0.9, 300)
    b = labels + rng.normal(0, 0.6, 300)
    ours = paired_auroc_difference(a, b, labels, clusters=range(300), resamples=2000)
    theirs = stats.bootstrap((a, b, labels),
                             lambda x, y, z: auroc(y, z.astype(bool)) - auroc(x, z.astype(bool)),
                             paired=True, vectorized=False, n_resamples=2000,
                             method="percentile", random_state=2).confidence_interval
    assert abs(ours["interval"][0] - theirs.low) < 0.02
    assert abs(ours["interval"][1] - theirs.high) < 0.02
    assert ours["verdict"] == ("higher" if ours["interval"][0] > 0 else
                               "no detectable difference")


def test_the_p_value_of_hand_made_draws_is_the_share_on_the_far_side_of_0(monkeypatch):
    # Four questions; five draws given as weights (how often each question is drawn). The
    # AUROC differences b − a on them, by hand: +0.25 (all once, twice), +1 ({2nd, 3rd}:
    # a ranks 0.2 below 0.6, b 0.8 above 0.3), 0 (without the 2nd: both separate
    # perfectly) and nan (no unanswerable question drawn, so it does not count).
    draws = np.array([[1, 1, 1, 1], [2, 2, 2, 2], [0, 1, 1, 0], [1, 0, 1, 1], [1, 1, 0, 0]])
    monkeypatch.setattr(ans_eval, "_cluster_draws", lambda *_: draws.astype(float))
    row = paired_auroc_difference([0.9, 0.2, 0.6, 0.1], [0.9, 0.8, 0.3, 0.1],
                                  [True, True, False, False], [1, 2, 3, 4])
    # a quarter of the four counted draws at or below 0, all of them at or above it
    assert row["p"] == 0.5 and row["verdict"] == "no detectable difference"
    assert bootstrap_p([0.1, 0.2, 0.3, float("nan")]) == 0.25  # none at 0: the floor 1/4
    assert bootstrap_p([0.0, 0.0]) == 1.0
    assert bootstrap_p([-0.1, -0.2, -0.3, 0.4]) == 0.5


def test_the_p_value_is_below_005_exactly_when_the_interval_leaves_out_0():
    rng = np.random.default_rng(7)
    seen = set()
    for noise in (0.8, 0.7, 0.65, 0.6, 0.5):
        labels = rng.random(300) < 0.6
        a = labels + rng.normal(0, 0.9, 300)
        b = labels + rng.normal(0, noise, 300)
        row = paired_auroc_difference(a, b, labels, clusters=np.repeat(range(100), 3))
        low, high = row["interval"]
        assert (row["p"] < 0.05) == (low > 0 or high < 0), row
        seen.add(row["verdict"])
    assert seen == {"higher", "no detectable difference"}  # both sides were tried


def test_the_step_table_is_one_holm_family_over_its_tiers_and_steps(monkeypatch):
    """Four changes (two tiers × two steps), raw p 0.02 to 0.045: each below 0.05, and
    Holm over one step's two tiers would still mark the first step's (0.04 each); over the
    table's four, none is marked (0.08, then 0.09)."""
    raw = iter([0.02, 0.03, 0.04, 0.045])
    result = SimpleNamespace(probabilities=np.zeros(2), answerable=np.array([True, False]))
    table = {"unanswerable": 1, "auroc": 0.9, "auroc_interval": (0.8, 1.0), "declined": 0.5,
             "wrongly_declined": 0.05, "result": result}
    monkeypatch.setattr(ans_tiers, "tier_table", lambda *_, **__: {"a": table, "b": table})
    monkeypatch.setattr(ans_eval, "paired_auroc_difference", lambda *_, **__: {
        "difference": 0.01, "interval": (0.001, 0.02), "p": next(raw)})
    tiered = SimpleNamespace(tiers={"a": [], "b": []},
                             tier=lambda name: SimpleNamespace(clusters=lambda: [0, 1]))
    rows = [row for row in step_rows(tiered, {}) if "auroc_change" in row]
    assert sorted(row["p"] for row in rows) == [0.02, 0.03, 0.04, 0.045]
    assert sorted(row["p_holm"] for row in rows) == [0.08, 0.09, 0.09, 0.09]
    assert {row["verdict"] for row in rows} == {"no detectable difference"}
    raw = iter([0.02, 0.03])
    compared = compare_detectors(tiered, {}, ["x"], ["x", "y"])  # one step: a family of 2
    assert [c["auroc_change"]["p_holm"] for c in compared.values()] == [0.04, 0.04]
    assert {c["auroc_change"]["verdict"] for c in compared.values()} == {"higher"}


def test_resampling_paragraphs_widens_the_interval_when_questions_cluster():
    rng = np.random.default_rng(0)
    paragraph_effect = np.repeat(rng.normal(0, 1, 60), 5)  # 5 questions per paragraph
    labels = np.repeat(rng.random(60) < 0.5, 5)
    scores = labels + paragraph_effect
    by_question = auroc_interval(scores, labels, range(300))
    by_paragraph = auroc_interval(scores, labels, np.repeat(range(60), 5))
    assert by_paragraph[1] - by_paragraph[0] > 1.5 * (by_question[1] - by_question[0])


# ---------------------------------------------------------------- on CMRC (e5 cache)
@pytest.fixture(scope="module")
def tier_signals_of(tiered):
    from course_lib.lab.measure.answerability_tiers import tier_signals

    return tier_signals(tiered)


def test_anchored_coverage_earns_its_place_on_the_swapped_tier(tiered, tier_signals_of):
    _, signals = tier_signals_of
    compared = compare_detectors(tiered, signals, CLASSIC_SIGNALS, SIGNALS)
    swapped = compared["swapped subject"]
    assert swapped["auroc_change"]["verdict"] == "higher"
    assert swapped["after"]["auroc"] >= 0.95 and swapped["after"]["declined"] >= 0.8
    assert compared["absent paragraph"]["auroc_change"]["verdict"] == "no detectable difference"


def test_the_fold_lesson_is_measured_paired(tiered, tier_signals_of):
    _, signals = tier_signals_of
    n = len(tiered.base.questions)
    lesson = fold_lesson(tiered.base, {k: v[:n] for k, v in signals.items()}, SIGNALS)
    assert lesson["difference"]["test"] == "mcnemar"
    assert set(lesson["wrongly declined"]) == {"by paragraph", "at random"}


def test_a_mixed_stream_declines_unanswerables_and_answers_the_rest(tiered, tier_signals_of):
    _, signals = tier_signals_of
    detector = AnswerabilityDetector(tiered.all.kb.paragraphs)
    detector.fit_signals(np.column_stack([signals[s] for s in SIGNALS]), tiered.all.answerable)
    result = mixed_stream(tiered, detector, stream_sample(tiered, 30, 10))
    assert result["asked"] == {"answerable": 30, "absent paragraph": 10, "topic present": 10,
                               "swapped subject": 10}
    assert result["answered correctly"]["with"] <= result["answered correctly"]["without"]
    assert result["declined"]["answerable"] < 0.2 < result["declined"]["swapped subject"]
