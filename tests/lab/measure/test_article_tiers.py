"""Answerability tiers on whole articles (DRCD): construction, folds by article, and the
cluster bootstrap against scipy's (issue: saying no where the topic is present)."""

import numpy as np
import pytest
from scipy import stats

from course_lib.lab.data.datasets import load_drcd
from course_lib.lab.data.kb_document import knowledge_base_document
from course_lib.lab.measure.answerability_evaluation import auroc, paired_auroc_difference
from course_lib.lab.measure.article_tiers import ARTICLE_TIERS, article_tiers


@pytest.fixture(scope="module")
def drcd_choose():
    return load_drcd("choose")


@pytest.fixture(scope="module")
def tiered(drcd_choose):
    return article_tiers(drcd_choose)


def test_counts_are_fixed_by_the_seed(drcd_choose, tiered):
    assert tuple(tiered.tiers) == ARTICLE_TIERS
    counts = {name: len(members) for name, members in tiered.tiers.items()}
    assert counts == {"sibling kept": 111, "article removed": 337, "swapped subject": 922}
    assert (len(tiered.answerable), tiered.ambiguous) == (1177, 23)
    again = article_tiers(drcd_choose)
    assert [q.question for q in again.all.questions] == [q.question for q in tiered.all.questions]
    other = article_tiers(drcd_choose, seed=1)
    assert other.tiers["sibling kept"] != tiered.tiers["sibling kept"]


def test_a_sibling_kept_question_keeps_its_article_but_not_its_paragraph(drcd_choose, tiered):
    kb = tiered.all.kb
    article_of = tiered.base.article_of
    for i in tiered.tiers["sibling kept"]:
        question = tiered.all.questions[i]
        assert question.paragraph not in kb.paragraphs          # its paragraph is gone
        siblings = [t for t, key in article_of.items() if key == article_of[question.paragraph]
                    and t != question.paragraph]
        assert any(t in kb.paragraphs for t in siblings)         # its article is not
        assert not any(a in t for a in question.answers for t in siblings
                       if t in kb.paragraphs)                    # no sibling writes the answer
        assert not tiered.all.answerable[i]
    for i in tiered.tiers["article removed"]:
        paragraph = tiered.all.questions[i].paragraph
        assert not any(key == article_of[paragraph] and t in kb.paragraphs
                       for t, key in article_of.items())


def test_removed_paragraphs_are_in_no_group_and_no_index(tiered):
    doc = knowledge_base_document(tiered.all.kb)
    held_out = set(tiered.base.held_out)
    for group in ("paragraph", "CoarseChunk"):
        texts = [node.text for node in doc.get_nodes(group)]
        assert not held_out & set(texts)
    whole_files = "\n".join(tiered.all.kb.files.values())
    assert not any(text in whole_files for text in held_out)


def test_folds_and_clusters_go_by_article(tiered):
    clusters = tiered.all.clusters()
    fold_of = {}
    for cluster, fold in zip(clusters, tiered.all.folds, strict=True):
        assert fold_of.setdefault(cluster, fold) == fold      # siblings share a fold
    assert len(set(clusters)) < len({q.paragraph for q in tiered.all.questions})
    for fold in range(tiered.all.n_folds):                    # every fold has both labels
        labels = {tiered.all.answerable[i] for i in tiered.all.report_fold(fold)}
        assert labels == {True, False}


def test_too_small_a_set_is_refused_naming_the_counts(drcd_choose):
    from course_lib.lab.data.datasets import keep_paragraphs

    few = keep_paragraphs(drcd_choose, {pid for a in drcd_choose.articles[:6]
                                        for pid in a.paragraph_ids})
    with pytest.raises(ValueError, match="untouched: .* each need at least folds=5"):
        article_tiers(few)
    with pytest.raises(TypeError, match="SquadSet with articles"):
        article_tiers([])


def test_the_cluster_bootstrap_agrees_with_scipys_over_articles():
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 6, 120)                       # questions per article
    article = np.repeat(np.arange(120), sizes)
    effect = np.repeat(rng.normal(0, 0.7, 120), sizes)   # articles rise and fall together
    labels = np.repeat(rng.random(120) < 0.6, sizes)
    a = labels + effect + rng.normal(0, 0.9, len(article))
    b = labels + effect + rng.normal(0, 0.6, len(article))
    ours = paired_auroc_difference(a, b, labels, clusters=article, resamples=2000)
    members = [np.flatnonzero(article == k) for k in range(120)]

    def difference(chosen):
        index = np.concatenate([members[int(k)] for k in chosen])
        return auroc(b[index], labels[index]) - auroc(a[index], labels[index])

    theirs = stats.bootstrap((np.arange(120),), difference, vectorized=False,
                             n_resamples=2000, method="percentile",
                             random_state=4).confidence_interval
    assert abs(ours["interval"][0] - theirs.low) < 0.015
    assert abs(ours["interval"][1] - theirs.high) < 0.015


def test_the_system_declines_sibling_kept_questions_end_to_end_with_its_evidence():
    from course_lib.answerability import SIGNALS, AnswerabilityDetector
    from course_lib.lab.measure.answerability_tiers import (
        careful_system,
        mixed_stream,
        stream_sample,
        tier_signals,
    )

    choose = article_tiers(load_drcd("choose"), swapped=False)
    _, signals = tier_signals(choose)
    matrix = np.column_stack([signals[name] for name in SIGNALS])
    detector = AnswerabilityDetector(choose.all.kb.paragraphs).fit_signals(
        matrix, choose.all.answerable)
    report = article_tiers(load_drcd("report"), swapped=False)
    used = detector.with_corpus(report.all.kb.paragraphs)
    stream = mixed_stream(report, used, stream_sample(report, 60, 40))
    assert stream["declined"]["sibling kept"] > 0.6      # measured 0.825
    assert stream["declined"]["article removed"] > 0.85  # measured 0.95
    assert stream["declined"]["answerable"] < 0.2        # measured 0.10
    system = careful_system(report.all.kb, used)
    replies = [system.ask(report.all.questions[i].question)
               for i in report.tiers["sibling kept"][:10]]
    declined = [r for r in replies if r.declined]
    assert declined, "none of ten sibling-kept questions was declined"
    evidence = declined[0].verdict.explain()
    assert "anchored coverage" in evidence and "asks for (read, not scored)" in evidence


def test_a_set_of_single_paragraph_articles_has_no_sibling_tier():
    from course_lib.lab.data.datasets import fetch_cmrc2018, load_squad

    tiered = article_tiers(load_squad(fetch_cmrc2018()), swapped=False)
    assert list(tiered.tiers) == ["article removed"]  # CMRC: an article is one paragraph
