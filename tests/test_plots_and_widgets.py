import numpy as np
import pytest

from course_lib import Document, load_sample, plots
from course_lib.llm import OfflineLLM
from course_lib.llm_groups import CHAPTER_TREE, build_chapter_tree


def test_comparison_holds_only_what_this_process_recorded():
    plots.record({"pipeline": "a", "recall@1": 0.5, "recall@3": 0.7, "recall@5": 0.8,
                  "mrr@1": 0.5, "mrr@3": 0.6, "mrr@5": 0.62, "seconds": 1.0})
    plots.record({"pipeline": "b", "recall@1": 0.9, "recall@3": 0.95, "recall@5": 0.97,
                  "mrr@1": 0.9, "mrr@3": 0.92, "mrr@5": 0.93})
    assert set(plots.recorded()) == {"a", "b"} and "seconds" not in plots.recorded()["a"]
    figure = plots.comparison_chart()
    assert len(figure.data) == 4 and list(figure.data[0].y) == [0.5, 0.7, 0.8]


def test_charts_hold_the_numbers_they_are_given():
    rows = [{"cut_off": 0.0, "recall@5": 0.99, "context_relevance@5": 0.2, "mean_kept": 5},
            {"cut_off": 2.0, "recall@5": 0.98, "context_relevance@5": 0.9, "mean_kept": 1}]
    sweep = plots.threshold_chart({"s": rows})
    assert list(sweep.data[0].x) == [0.2, 0.9] and sweep.data[-1].name == "chapter"
    shift = plots.rank_shift_chart([3, 1, None, 2], [1, 1, 2, 4])
    assert len(shift.data) == 3  # unchanged ranks are not drawn
    overlap = plots.path_overlap_chart([["a", "b"], ["b", "a"], ["a"], []], 4)
    assert list(overlap.data[0].y) == ["a + b", "a", "no path"]


def test_tree_chart_and_pca_map():
    texts, _ = load_sample()
    doc = Document(texts={k: v for k, v in texts.items() if k.endswith(".txt")})
    build_chapter_tree(doc, OfflineLLM())
    figure = plots.tree_chart(doc, ["root", *CHAPTER_TREE])
    labels = figure.data[-1].text
    assert len(labels) == 8 and any("sentence-len" in label for label in labels)
    rng = np.random.default_rng(0)
    points = plots.pca_2d(rng.normal(size=(50, 8)) * [10, 5, 1, 1, 1, 1, 1, 1])
    assert points.shape == (50, 2) and points[:, 0].var() > points[:, 1].var()
    vectors = rng.normal(size=(6, 4))
    emb = plots.embedding_map(vectors, list("aabbcc"), vectors[0], np.array([0, 1]))
    assert [t.name for t in emb.data] == ["a", "b", "c", "neighbours", "query"]


def test_show_falls_back_without_an_exporter(monkeypatch, capsys):
    figure = plots.comparison_chart({"x": {"recall@1": 1.0, "recall@3": 1.0, "recall@5": 1.0}})
    monkeypatch.setattr(type(figure), "to_image", lambda *a, **k: (_ for _ in ()).throw(
        RuntimeError("no browser")))
    shown = []
    monkeypatch.setattr(type(figure), "show", lambda self, renderer=None: shown.append(renderer))
    plots.show(figure)
    assert shown == ["notebook_connected"]


def test_query_explorer_and_threshold_slider(cmrc_kb):
    from course_lib.widgets import explore, query_explorer, threshold_slider

    question = cmrc_kb.questions[0]
    html = explore(cmrc_kb, question.question)
    assert "gold paragraph found" in html and "background:#e6ffe6" in html
    custom = explore(cmrc_kb, question.question, "custom", "paragraph", "bm25_char", 3)
    assert custom.count("<tr") == 4
    panel = query_explorer(cmrc_kb)
    output = panel.children[-1]
    assert "gold paragraph found" in output.value
    panel.children[2].children[0].value = 1  # top k slider
    assert output.value.count("<tr") == 2
    rows = [{"cut_off": c, "recall@5": 1 - c / 10, "context_relevance@5": c / 4, "mean_kept": 1}
            for c in (0.0, 1.0, 2.0)]
    slider = threshold_slider(rows)
    slider.children[0].value = 2.0
    assert "cut-off 2: recall@5 0.800" in slider.children[1].value


@pytest.fixture(autouse=True)
def _isolated_comparison():
    plots.clear_recorded()
    yield
    plots.clear_recorded()
