import numpy as np
import pytest

from course_lib import Document, load_sample, plots
from course_lib.llm import OfflineLLM
from course_lib.llm_groups import CHAPTER_TREE, build_chapter_tree


def _scores(r1):
    return {"recall@1": r1, "recall@3": min(1.0, r1 + 0.02), "recall@5": min(1.0, r1 + 0.03),
            "mrr@1": r1, "mrr@3": r1 + 0.01, "mrr@5": r1 + 0.015, "seconds": 1.0}


def _titles(figure):
    layout = figure.layout
    return [layout.title.text or "", layout.title.subtitle.text or "",
            *(a.text or "" for a in layout.annotations), *(t.name or "" for t in figure.data)]


def test_comparison_holds_only_what_this_process_recorded():
    plots.record({"pipeline": "a", "recall@1": 0.5, "recall@3": 0.7, "recall@5": 0.8,
                  "mrr@1": 0.5, "mrr@3": 0.6, "mrr@5": 0.62, "seconds": 1.0})
    plots.record({"pipeline": "b", "recall@1": 0.9, "recall@3": 0.95, "recall@5": 0.97,
                  "mrr@1": 0.9, "mrr@3": 0.92, "mrr@5": 0.93})
    assert set(plots.recorded()) == {"a", "b"} and "seconds" not in plots.recorded()["a"]
    figure = plots.comparison_chart()
    # one panel per metric, one bar per pipeline, best recall@1 first and highlighted
    assert [t.name for t in figure.data] == ["recall@1", "recall@3", "recall@5", "mrr@5"]
    assert list(figure.data[0].y) == ["b", "a"] and list(figure.data[0].x) == [0.9, 0.5]
    assert list(figure.data[3].text) == ["0.930", "0.620"]  # every bar carries its value
    colours = figure.data[0].marker.color
    assert colours[0] == plots.HIGHLIGHT and colours[1] != plots.HIGHLIGHT
    assert figure.layout.xaxis.range[0] < 0.5  # the axis starts below the smallest value


def test_comparison_shows_at_most_eight_and_zooms_on_high_scores():
    results = {f"p{i:02d}": _scores(0.95 + i / 1000) for i in range(12)}
    figure = plots.comparison_chart(results)
    shown = list(figure.data[0].y)
    assert len(shown) == 8 and shown[0] == "p11" and shown[-1] == "p04"  # the 8 best, sorted
    assert "the 8 best of 12" in figure.layout.title.subtitle.text
    assert "best: p11" in figure.layout.title.subtitle.text
    assert 0.85 <= figure.layout.xaxis.range[0] <= 0.95 and "bars start at" in \
        figure.layout.title.subtitle.text  # the 0.95–1.0 band gets most of the width
    assert all(len(trace.y) <= 8 for trace in figure.data)
    assert plots.comparison_chart(results, limit=3).data[0].y == ("p11", "p10", "p09")
    assert "best of" not in plots.comparison_chart(dict(list(results.items())[:8])).layout \
        .title.subtitle.text
    assert "Nothing recorded" in plots.comparison_chart({}).layout.annotations[0].text


def test_charts_hold_the_numbers_they_are_given():
    rows = [{"cut_off": 0.0, "recall@5": 0.99, "context_relevance@5": 0.2, "mean_kept": 5},
            {"cut_off": 2.0, "recall@5": 0.98, "context_relevance@5": 0.9, "mean_kept": 1}]
    sweep = plots.threshold_chart({"reranker score": rows})
    assert list(sweep.data[0].x) == [0.2, 0.9] and sweep.data[-1].name.startswith("reference")
    assert [a.text for a in sweep.layout.annotations] == ["0", "2"]  # cut-offs by their points
    shift = plots.rank_shift_chart([3, 1, None, 2, 3], [1, 1, 2, 4, 1])
    assert len(shift.data) == 3  # unchanged ranks are not drawn; equal moves share a line
    assert shift.data[-1].line.width > shift.data[0].line.width  # 3 → 1 twice: thicker
    assert "4 of 5 questions changed rank: 3 up, 1 down" in shift.layout.title.subtitle.text
    overlap = plots.path_overlap_chart([["a", "b"], ["b", "a"], ["a"], []], 4)
    assert list(overlap.data[0].y) == ["a + b", "a", "no path"]
    assert overlap.data[0].cliponaxis is False and overlap.layout.xaxis.range[1] > 0.5


def test_threshold_labels_do_not_overlap():
    # 0 and 0.1 give the same point (one label "0–0.1"); 2, 2.5 and 3 crowd one corner
    rows = [{"cut_off": c, "recall@5": r, "context_relevance@5": x, "mean_kept": 1}
            for c, r, x in ((0.0, 0.92, 0.19), (0.1, 0.92, 0.19), (0.2, 0.89, 0.29),
                            (2.0, 0.99, 0.94), (2.5, 0.97, 0.955), (3.0, 0.93, 0.93))]
    figure = plots.threshold_chart([*rows])
    labels = [a.text for a in figure.layout.annotations]
    assert labels[0] == "0–0.1" and "0.1" not in labels[1:] and len(labels) >= 4
    assert figure.data[0].showlegend is False  # one unnamed curve: no legend entry
    named = plots.threshold_chart({"cosine (USE)": rows})
    assert named.data[0].name == "cosine (USE)" and named.data[0].showlegend is not False
    points, texts = [(100, 100), (104, 100), (108, 102), (300, 5)], ["0.25", "0.3", "0.35", "9"]
    spots = plots._label_spots(points, texts, [], [], (800, 400))
    boxes = [plots._label_box(*p, t, s) for p, t, s in zip(points, texts, spots, strict=True) if s]
    assert len(boxes) >= 3 and spots[3].startswith("bottom")  # room above is off the chart
    assert not any(plots._overlaps(a, [b]) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_score_histograms_one_panel_per_model_on_one_axis():
    panels = {"cosine (e5)": {"gold paragraph": [0.9, 0.91, 0.93], "other paragraphs": [0.85] * 4},
              "cosine (USE)": {"gold paragraph": [0.4, 0.5], "other paragraphs": [0.2, 0.3]}}
    lines = {"cosine (e5)": {"measured 0.88": 0.88},
             "cosine (USE)": {"measured 0.3": 0.3, "chapter 0.4": 0.4}}
    figure = plots.score_histograms(panels, lines=lines)
    assert len(figure.data) == 4 and {t.histnorm for t in figure.data} == {"percent"}
    assert [t.xaxis for t in figure.data] == ["x", "x", "x2", "x2"]  # a row per model
    assert list(figure.data[0].x) == [0.9, 0.91, 0.93]  # the numbers it was given
    assert figure.data[0].marker.color == plots.HIGHLIGHT  # the gold paragraph stands out
    assert [t.showlegend for t in figure.data] == [True, True, False, False]  # legend once
    assert figure.layout.xaxis2.matches == "x" or figure.layout.xaxis.matches == "x2"
    assert list(figure.layout.xaxis.range) == [0.0, 1.0] and figure.data[0].xbins.size == 0.01
    titles = [a.text for a in figure.layout.annotations]
    assert "cosine (e5): gold paragraph 3, other paragraphs 4" in titles  # group sizes
    assert {"measured 0.88", "measured 0.3", "chapter 0.4"} <= set(titles)
    assert sum(shape.type == "line" for shape in figure.layout.shapes) == 3
    with pytest.raises(ValueError, match="empty"):
        plots.score_histograms({})


def test_titles_carry_no_backticks():
    rows = [{"cut_off": 0.0, "recall@5": 0.99, "context_relevance@5": 0.2, "mean_kept": 5}]
    figures = [plots.comparison_chart({"`a`": _scores(0.9)}),
               plots.threshold_chart({"`cosine`": rows}, chapter_label="`chapter`"),
               plots.rank_shift_chart([2], [1]), plots.path_overlap_chart([["a"]], 1),
               plots.embedding_map(np.eye(3), ["`x`", "y", "y"]),
               plots.score_histograms({"`e5`": {"`gold`": [0.9]}}, lines={"`e5`": {"`c`": 0.8}},
                                      title="`scores`")]
    for figure in figures:
        assert not any("`" in text for text in _titles(figure)), _titles(figure)


def test_tree_chart_and_pca_map():
    texts, _ = load_sample()
    doc = Document(texts={k: v for k, v in texts.items() if k.endswith(".txt")})
    build_chapter_tree(doc, OfflineLLM())
    figure = plots.tree_chart(doc, ["root", *CHAPTER_TREE])
    labels = [a.text for a in figure.layout.annotations]
    assert len(labels) == 8 and any("sentence-len" in label for label in labels)
    assert "`" not in figure.layout.title.text
    rng = np.random.default_rng(0)
    points = plots.pca_2d(rng.normal(size=(50, 8)) * [10, 5, 1, 1, 1, 1, 1, 1])
    assert points.shape == (50, 2) and points[:, 0].var() > points[:, 1].var()
    vectors = rng.normal(size=(6, 4))
    roles = plots.paragraph_roles(6, gold=1, retrieved=[0, 1, 4])
    assert roles == ["retrieved", "gold paragraph", "other", "other", "retrieved", "other"]
    emb = plots.embedding_map(vectors, roles, vectors[0], np.array([0, 1, 4]))
    assert [t.name for t in emb.data] == ["other (3)", "retrieved (2)", "gold paragraph (1)",
                                          "top 3 (rank)", "question"]
    assert [t.marker.color for t in emb.data[:3]] == [plots.MUTED, plots.PLAIN, plots.HIGHLIGHT]
    assert list(emb.data[3].text) == ["1", "2", "3"]
    other = plots.embedding_map(vectors, list("aabbcc"))  # any labels still work
    assert [t.name for t in other.data] == ["a (2)", "b (2)", "c (2)"]


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
