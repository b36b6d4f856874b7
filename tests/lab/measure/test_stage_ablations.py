"""What each stage of multipath-rerank adds (course_lib.lab.measure.stage_ablations): the
remembered paths, the variants with one stage taken out, and what stage_ablations wires
together (stand-in paths and reranker, evaluate recorded: no model runs)."""

import pytest

from course_lib import DocNode
from course_lib.lab.measure import stage_ablations as sa
from course_lib.lab.measure.stage_ablations import (
    METRICS,
    SYSTEM,
    remembered,
    stage_ablations,
    stage_variants,
    three_paths,
)
from course_lib.rerank import Reranker


def test_remembered_runs_once_per_query_and_hands_out_copies():
    calls = []
    path = remembered(lambda q: calls.append(q) or [DocNode(q, uid=q)])
    first = path("长城")
    first.append(DocNode("extra", uid="x"))  # the caller changes its copy
    assert [n.uid for n in path("长城")] == ["长城"]
    path("黄河")
    assert calls == ["长城", "黄河"]


def fake_paths(log):
    texts = {"words": ["甲", "乙"], "characters": ["乙", "丙"], "meaning": ["丙", "丁"]}

    def path_of(name):
        def path(query):
            log.append(name)
            return [DocNode(t, uid=t) for t in texts[name]]
        return path

    return {name: path_of(name) for name in texts}


def by_text(query, texts):
    """A stand-in reranker model: the higher code point first (甲 乙 丙 丁)."""
    return [ord(t[0]) for t in texts]


def test_each_variant_leaves_out_exactly_one_stage():
    log = []
    paths = fake_paths(log)
    variants = stage_variants(paths, Reranker(model=by_text, topk=10))
    assert list(variants) == ["without words", "without characters", "without meaning",
                              "RRF instead of the reranker"]
    expected = {"without words": ({"characters", "meaning"}, ["乙", "丙", "丁"]),
                "without characters": ({"words", "meaning"}, ["甲", "乙", "丙", "丁"]),
                "without meaning": ({"words", "characters"}, ["甲", "乙", "丙"])}
    for name, (ran, order) in expected.items():
        log.clear()
        assert [n.text for n in variants[name]("q")] == order  # reranked: by the model
        assert set(log) == ran
    log.clear()
    fused = [n.text for n in variants["RRF instead of the reranker"]("q")]
    assert set(log) == {"words", "characters", "meaning"}
    assert set(fused) == {"甲", "乙", "丙", "丁"} and fused[0] in {"乙", "丙"}  # found twice


@pytest.fixture
def evaluated(monkeypatch):
    calls = []

    def evaluate(kb, retrieve, with_intervals=True):
        assert with_intervals is False
        calls.append(retrieve)
        return {"run": len(calls)}

    monkeypatch.setattr(sa, "evaluate", evaluate)
    return calls


def test_one_case_per_variant_and_metric_against_the_full_system(evaluated):
    paths, reranker = fake_paths([]), Reranker(model=by_text, topk=3)
    cases = stage_ablations("toy", "kb", paths, reranker)
    assert len(evaluated) == 5  # the full system, then the four variants
    assert len(cases) == 4 * len(METRICS)
    assert [c.metric for c in cases[:2]] == list(METRICS)
    assert {c.setting for c in cases} == {"toy"} and {c.technique for c in cases} == {SYSTEM}
    assert all(c.technique_result == {"run": 1} for c in cases)
    assert [c.baseline_result["run"] for c in cases[::2]] == [2, 3, 4, 5]
    assert [c.baseline for c in cases[::2]] == list(stage_variants(paths, reranker))


def test_a_given_full_run_is_reused(evaluated):
    full = {"run": "given"}
    cases = stage_ablations("toy", "kb", fake_paths([]), Reranker(model=by_text), full=full,
                            metrics=["recall@1"])
    assert len(evaluated) == 4 and len(cases) == 4
    assert all(c.technique_result is full for c in cases)


def test_paths_without_their_reranker_are_refused(evaluated):
    with pytest.raises(ValueError, match="reranker is needed with paths"):
        stage_ablations("toy", "kb", fake_paths([]))
    assert evaluated == []


def test_without_paths_the_system_is_built_on_the_kb(evaluated, monkeypatch):
    built = []
    paths, reranker = fake_paths([]), Reranker(model=by_text)
    monkeypatch.setattr(sa, "three_paths", lambda kb: built.append(kb) or ("doc", paths))
    monkeypatch.setattr(sa, "prepared_reranker", lambda doc: built.append(doc) or reranker)
    cases = stage_ablations("toy", "the kb", metrics=["recall@1"])
    assert built == ["the kb", "doc"] and len(cases) == 4


def test_three_paths_embeds_the_kb_and_remembers_each_path(monkeypatch):
    asked = []
    monkeypatch.setattr(sa, "knowledge_base_document",
                        lambda kb, embed: asked.append((kb, embed)) or "doc")
    log = []
    monkeypatch.setattr(sa, "paragraph_paths", lambda doc: fake_paths(log))
    doc, paths = three_paths("the kb")
    assert doc == "doc" and asked == [("the kb", True)]
    assert list(paths) == ["words", "characters", "meaning"]
    for path in paths.values():
        path("q")
        path("q")
    assert log == ["words", "characters", "meaning"]  # each ran once for the query
