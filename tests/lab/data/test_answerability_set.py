"""The answerability evaluation set (course_lib.lab.data.answerability_set): which paragraphs
are removed, how questions are labelled and dealt into folds, and what the set reports."""

from collections import Counter

import pytest
from place_kb import PLACES as ALL_PLACES
from place_kb import place_paragraphs

from course_lib.lab.data.answerability_set import AnswerabilitySet, answerability_set
from course_lib.lab.data.datasets import Question, SquadSet, build_knowledge_base

PLACES = ALL_PLACES[:12]


def tiny_kb(places=PLACES, unasked=0, duplicate=False):
    """One paragraph per place with two questions each; ``unasked`` extra paragraphs no
    question points at; ``duplicate`` repeats the first paragraph's text under a new id."""
    paragraphs, questions = place_paragraphs(
        places, "{place}在第{i}区。{place}有第{i}景。",
        [("{place}在哪个区？", "第{i}区"), ("{place}有什么景？", "第{i}景")])
    for k in range(unasked):
        paragraphs.append((f"U{k}", f"无人问的第{k}段。"))
    if duplicate:
        paragraphs.append(("DUP", paragraphs[0][1]))
        questions.append(Question("Q-dup", "长城又在哪个区？", ["第0区"],
                                  [paragraphs[0][1].index("第0区")], "DUP", paragraphs[0][1]))
    return build_knowledge_base(SquadSet(paragraphs, questions, skipped=["empty1"],
                                         fixed_offsets=["Q0-0", "Q1-1"]), docs_per_file=3)


def test_the_reduced_kb_keeps_unasked_paragraphs_and_the_kept_repairs():
    kb = tiny_kb(unasked=2)
    data = answerability_set(kb, held_out=0.5, folds=2, seed=3)
    assert len(data.held_out) == 6  # half of the 12 paragraphs with questions
    assert set(data.kb.paragraphs) == set(kb.paragraphs) - set(data.held_out)
    assert "无人问的第0段。" in data.kb.paragraphs  # never asked about: never removed
    assert data.kb.skipped == ["empty1"]
    kept_ids = {q.id for q in data.kb.questions}
    assert data.kb.fixed_offsets == [i for i in ["Q0-0", "Q1-1"] if i in kept_ids]


def test_docs_per_file_shapes_the_reduced_kb():
    kb = tiny_kb()
    data = answerability_set(kb, held_out=0.5, folds=2, seed=0, docs_per_file=2)
    assert len(data.kb.files) == 3  # 6 paragraphs kept, 2 per file
    assert all(text.count("\n") == 1 for text in data.kb.files.values())


def test_held_out_is_in_first_asked_order_and_unanswerable_keep_their_old_file():
    kb = tiny_kb()
    old_file = {q.id: q.file_name for q in kb.questions}
    data = answerability_set(kb, held_out=0.5, folds=2, seed=7)
    asked = list(dict.fromkeys(q.paragraph for q in kb.questions))
    assert data.held_out == [t for t in asked if t in data.held_out]
    for question, answerable in zip(data.questions, data.answerable, strict=True):
        if not answerable:
            assert question.file_name == old_file[question.id]
        else:
            assert data.kb.files[question.file_name].startswith(
                question.paragraph, question.paragraph_offset)


def test_the_questions_are_copies():
    kb = tiny_kb()
    data = answerability_set(kb, held_out=0.5, folds=2, seed=0)
    for question in data.questions:
        question.answers.append("changed")
        question.answer_starts.append(-1)
    assert all(len(q.answers) == 1 and len(q.answer_starts) == 1 for q in kb.questions)
    assert not any(a is b for a, b in zip(data.questions, kb.questions, strict=True))


def test_equal_paragraphs_are_removed_together():
    kb = tiny_kb(duplicate=True)
    for seed in range(6):
        data = answerability_set(kb, held_out=0.5, folds=2, seed=seed)
        by_id = dict(zip((q.id for q in data.questions), data.answerable, strict=True))
        assert by_id["Q-dup"] == by_id["Q0-0"] == by_id["Q0-1"]
        fold = dict(zip((q.id for q in data.questions), data.folds, strict=True))
        assert fold["Q-dup"] == fold["Q0-0"]


def test_each_fold_gets_an_equal_share_of_removed_and_kept_paragraphs():
    data = answerability_set(tiny_kb(), held_out=0.5, folds=3, seed=1)
    removed, kept = Counter(), Counter()
    for paragraph in dict.fromkeys(q.paragraph for q in data.questions):
        fold = data.folds[[q.paragraph for q in data.questions].index(paragraph)]
        (removed if paragraph in data.held_out else kept)[fold] += 1
    assert removed == Counter({0: 2, 1: 2, 2: 2}) and kept == Counter({0: 2, 1: 2, 2: 2})
    every = sorted(i for fold in range(3) for i in data.report_fold(fold))
    assert every == list(range(len(data.questions)))  # the report folds cover each once


def test_clusters_are_paragraphs_unless_an_article_is_named():
    data = answerability_set(tiny_kb(), held_out=0.5, folds=2, seed=0)
    assert data.clusters() == [q.paragraph for q in data.questions]
    first, second = data.questions[0].paragraph, data.questions[2].paragraph
    data.article_of = {first: "article-A", second: "article-A"}
    clusters = data.clusters()
    assert clusters[:4] == ["article-A"] * 4
    assert clusters[4:] == [q.paragraph for q in data.questions[4:]]


def test_summary_says_what_was_removed_and_how_folds_are_made():
    data = answerability_set(tiny_kb(unasked=1), held_out=0.25, folds=3, seed=2)
    assert data.summary() == ("3 of 13 paragraphs removed (seed 2): 18 answerable and "
                              "6 unanswerable questions, 3 folds by paragraph")
    data.article_of = {data.questions[0].paragraph: "a1"}
    assert data.summary().endswith("3 folds by article")


def test_a_hand_made_set_checks_its_fold():
    data = AnswerabilitySet(tiny_kb(), [], [], [], [], seed=0, n_folds=2)
    assert data.report_fold(1) == []
    with pytest.raises(ValueError, match="fold"):
        data.report_fold(-1)


@pytest.mark.parametrize("kwargs, message", [
    ({"held_out": -0.1}, "held_out"),
    ({"seed": 1.5}, "seed"),
    ({"held_out": 0.9, "folds": 2}, "removes 11 and keeps 1"),
])
def test_impossible_requests_are_refused(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        answerability_set(tiny_kb(), **kwargs)
