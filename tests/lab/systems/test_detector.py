"""The answerability detector fitted for a knowledge base (course_lib.lab.systems.detector):
candidates from a named pipeline on the reduced knowledge base, and what fit_detector wires
together — its defaults, the fit, and the whole knowledge base's idf (BM25 candidates and a
stand-in embedder: no model runs)."""

import numpy as np
import pytest
from place_kb import PLACES, place_paragraphs

from course_lib.answerability import AnswerabilityDetector
from course_lib.lab.data.answerability_set import answerability_set
from course_lib.lab.data.datasets import SquadSet, build_knowledge_base
from course_lib.lab.systems import detector as detector_module
from course_lib.lab.systems.detector import fit_detector, retrieve_candidates


def tiny_kb():
    paragraphs, questions = place_paragraphs(
        PLACES, "{place}位于第{i}号地区。{place}以第{i}种风景闻名。",
        [("{place}位于哪个地区？", "第{i}号地区"), ("{place}以什么风景闻名？", "第{i}种风景")])
    return build_knowledge_base(SquadSet(paragraphs, questions), docs_per_file=4)


def characters(texts):
    """A stand-in embedder: which of a few characters each text holds."""
    return np.array([[float(c in t) for c in "位于以风景闻名地区号种"] + [1.0] for t in texts])


@pytest.fixture(scope="module")
def data():
    return answerability_set(tiny_kb(), held_out=0.25, folds=2, seed=0)


@pytest.fixture(scope="module")
def candidates(data):
    return retrieve_candidates(data, "bm25-paragraph")


def test_candidates_come_from_the_reduced_knowledge_base(data, candidates):
    assert len(candidates) == len(data.questions)
    kept = set(data.kb.paragraphs)
    assert all(c and {n.text for n in c} <= kept for c in candidates)
    for question, answerable, found in zip(data.questions, data.answerable, candidates,
                                           strict=True):
        if answerable:
            assert found[0].text == question.paragraph  # the place's name finds it
        else:
            assert question.paragraph not in {n.text for n in found}


def test_an_unknown_pipeline_is_refused(data):
    with pytest.raises(ValueError, match="unknown pipeline 'nope'"):
        retrieve_candidates(data, "nope")


def test_the_fitted_detector_uses_the_whole_kbs_idf_and_separates_the_questions(data,
                                                                               candidates):
    kb = tiny_kb()
    fitted = fit_detector(kb, data, candidates, max_wrong=0.1, embedder=characters)
    assert fitted.fitted and fitted.signal_names[:2] == ("word_coverage", "bigram_coverage")
    whole = AnswerabilityDetector(kb.paragraphs, embedder=characters)
    reduced = AnswerabilityDetector(data.kb.paragraphs, embedder=characters)
    ours = fitted.signal_matrix(data.questions, candidates)
    assert np.allclose(ours, whole.signal_matrix(data.questions, candidates))
    assert not np.allclose(ours, reduced.signal_matrix(data.questions, candidates))
    reduced.fit(data.questions, candidates, data.answerable, 0.1)
    assert fitted.threshold == reduced.threshold and fitted.weights() == reduced.weights()
    probability = [fitted.probability(q.question, c)
                   for q, c in zip(data.questions, candidates, strict=True)]
    answerable = np.asarray(data.answerable)
    assert min(np.asarray(probability)[answerable]) > max(np.asarray(probability)[~answerable])


def test_the_defaults_are_the_seed_0_set_and_its_retrieved_candidates(monkeypatch):
    kb = tiny_kb()
    seen = []

    def candidates_of(data, pipeline="hybrid-rrf"):
        seen.append((data, pipeline))
        return retrieve_candidates(data, "bm25-paragraph")  # no e5 here

    monkeypatch.setattr(detector_module, "retrieve_candidates", candidates_of)
    fitted = fit_detector(kb, embedder=characters)
    [(data, pipeline)] = seen
    expected = answerability_set(kb)
    assert pipeline == "hybrid-rrf"
    assert (data.seed, data.n_folds, data.held_out) == (0, 5, expected.held_out)
    assert fitted.fitted
    # given candidates are used as they are: nothing is retrieved
    seen.clear()
    fit_detector(kb, data, candidates_of(data), embedder=characters)
    assert len(seen) == 1
