import numpy as np
import pytest

from course_lib import Document, load_sample
from course_lib.lab.show import figures, plots
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
    # one panel per metric, one bar per pipeline, best recall@1 first
    assert [t.name for t in figure.data] == ["recall@1", "recall@3", "recall@5", "mrr@5"]
    assert list(figure.data[0].y) == ["b", "a"] and list(figure.data[0].x) == [0.9, 0.5]
    assert list(figure.data[3].text) == ["0.930", "0.620"]  # every bar carries its value
    # no per-question results: nothing tested, so nothing highlighted, and the chart says so
    assert plots.HIGHLIGHT not in figure.data[0].marker.color
    assert "not tested" in figure.layout.title.subtitle.text
    assert figure.layout.xaxis.range[0] < 0.5  # the axis starts below the smallest value


def test_the_best_bar_is_highlighted_only_when_a_paired_test_says_so():
    def result(hits):
        return {"recall@1": sum(hits) / len(hits), "per_question": {"recall@1": hits}}

    clear = {"wide": result([1.0] * 40), "narrow": result([1.0] * 30 + [0.0] * 10)}
    figure = plots.comparison_chart(clear, ks=(1,))
    assert list(figure.data[0].marker.color) == [plots.HIGHLIGHT, plots.PLAIN]
    assert "detectably above narrow" in figure.layout.title.subtitle.text
    close = {"wide": result([1.0] * 40), "narrow": result([1.0] * 38 + [0.0] * 2)}
    figure = plots.comparison_chart(close, ks=(1,))  # 2 questions apart: McNemar p 0.5
    assert plots.HIGHLIGHT not in figure.data[0].marker.color
    assert "no detectable difference from narrow" in figure.layout.title.subtitle.text
    plots.clear_recorded()
    plots.record({"pipeline": "x", **clear["wide"]})
    plots.record({"pipeline": "y", **clear["narrow"]})
    assert list(plots.comparison_chart(ks=(1,)).data[0].marker.color)[0] == plots.HIGHLIGHT


def test_comparison_shows_at_most_eight_and_zooms_on_high_scores():
    results = {f"p{i:02d}": _scores(0.95 + i / 1000) for i in range(12)}
    figure = plots.comparison_chart(results)
    shown = list(figure.data[0].y)
    assert len(shown) == 8 and shown[0] == "p11" and shown[-1] == "p04"  # the 8 best, sorted
    assert "the 8 best of 12" in figure.layout.title.subtitle.text
    assert "highest: p11" in figure.layout.title.subtitle.text
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
    spots = figures._label_spots(points, texts, [], [], (800, 400))
    boxes = [figures._label_box(*p, t, s)
             for p, t, s in zip(points, texts, spots, strict=True) if s]
    assert len(boxes) >= 3 and spots[3].startswith("bottom")  # room above is off the chart
    assert not any(figures._overlaps(a, [b]) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_a_label_never_covers_a_line_it_is_left_out_instead():
    # horizontal lines every 3 px across the whole neighbourhood of the point: every spot
    # around it crosses one, so the point gets no label (the old fallback put one on a line)
    lines = [(20, y, 180, y) for y in range(50, 151, 3)]
    assert figures._label_spots([(100, 100)], ["0.15"], [], lines, (800, 400)) == [None]
    # with one line only, a spot clear of it is found and nothing crosses it
    (spot,) = figures._label_spots([(100, 100)], ["0.15"], [], [(20, 90, 180, 90)], (800, 400))
    box = figures._label_box(100, 100, "0.15", spot)
    assert spot and not (box[1] < 90 < box[3])


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


def _png(pixels, filters):
    """A PNG of ``pixels`` (height x width x 4, uint8) with the given filter per row
    (0 None, 2 Up, as Chromium writes them; any other is declared, the row left as is)."""
    import struct
    import zlib

    height, width, _ = pixels.shape
    rows = []
    for y in range(height):
        row = pixels[y].astype(np.int16)
        if filters[y] == 2:
            row = row - (pixels[y - 1] if y else 0)
        rows.append(bytes([filters[y]]) + (row % 256).astype(np.uint8).tobytes())
    return (b"\x89PNG\r\n\x1a\n"
            + figures._png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + figures._png_chunk(b"IDAT", zlib.compress(b"".join(rows)))
            + figures._png_chunk(b"IEND", b""))


def _decode_indexed(png):
    import struct
    import zlib

    chunks = dict(figures._png_chunks(png))
    width, height, depth, kind = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, kind) == (8, 3)  # 8-bit indexed
    palette = np.frombuffer(chunks[b"PLTE"], np.uint8).reshape(-1, 3)
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, width + 1)
    assert not rows[:, 0].any()  # every row unfiltered
    return palette[rows[:, 1:]]


def test_compact_png_keeps_every_pixel_of_a_chart_like_image():
    rng = np.random.default_rng(0)
    colours = rng.integers(0, 256, size=(40, 3))
    pixels = np.full((30, 50, 4), 255, np.uint8)
    pixels[..., :3] = colours[rng.integers(0, 40, size=(30, 50))]
    png = _png(pixels, [2] * 15 + [0] * 15)
    small = plots.compact_png(png)
    assert small != png and figures._png_size(small) == (50, 30)
    assert (_decode_indexed(small) == pixels[..., :3]).all()  # 40 colours: nothing lost
    # what it leaves alone: transparency, filters it does not undo, not a PNG at all
    clear = pixels.copy()
    clear[0, 0, 3] = 0
    assert plots.compact_png(_png(clear, [0] * 30)) == _png(clear, [0] * 30)
    paeth = _png(pixels, [4] * 30)  # (rows left as they are: never decoded)
    assert plots.compact_png(paeth) == paeth and plots.compact_png(b"GIF89a") == b"GIF89a"
    noisy = rng.integers(0, 256, size=(30, 50, 4), dtype=np.uint8)
    noisy[..., 3] = 255
    assert plots.compact_png(_png(noisy, [0] * 30)) == _png(noisy, [0] * 30)  # would blur


def _displayed(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda bundle, raw=False, metadata=None: shown.append((bundle, metadata)))
    return shown


def test_show_without_an_exporter_is_interactive_and_offline(monkeypatch):
    import json

    figure = plots.comparison_chart({"x": {"recall@1": 1.0, "recall@3": 1.0, "recall@5": 1.0}})
    monkeypatch.setattr(figures, "_exporter_ready", lambda: False)
    monkeypatch.setattr(type(figure), "to_image", lambda *a, **k: pytest.fail("no exporter"))
    shown = _displayed(monkeypatch)
    plots.show(figure)
    (bundle, metadata), = shown
    # plotly's JupyterLab extension draws this mimetype with its own plotly.js: no CDN,
    # no script, nothing for an untrusted notebook to refuse
    assert set(bundle) == {plots.PLOTLY_MIME, "text/plain"}
    spec = bundle[plots.PLOTLY_MIME]
    assert spec["data"][0]["x"] == [1.0] and spec["layout"]["title"]["text"].startswith("Recall")
    assert "cdn" not in json.dumps(spec).lower() and "<script" not in json.dumps(spec)
    assert bundle["text/plain"].startswith("Interactive chart: Recall@k and MRR@k on CMRC 2018")
    assert "object>" not in bundle["text/plain"]
    monkeypatch.setattr(figures, "_exporter_ready", lambda: True)  # an exporter, but the
    monkeypatch.setenv("COURSE_PLOTS", "interactive")  # environment asks for live figures
    plots.show(figure)
    assert set(shown[-1][0]) == {plots.PLOTLY_MIME, "text/plain"}
    monkeypatch.delenv("COURSE_PLOTS")  # an exporter that fails: the interactive figure
    monkeypatch.setattr(type(figure), "to_image", lambda *a, **k: (_ for _ in ()).throw(
        RuntimeError("the browser died")))
    plots.show(figure)
    assert set(shown[-1][0]) == {plots.PLOTLY_MIME, "text/plain"}
    with pytest.raises(RuntimeError, match="the export failed: the browser died"):
        plots.show(figure, interactive=False)
    monkeypatch.setattr(figures, "_exporter_ready", lambda: False)
    with pytest.raises(RuntimeError, match="interactive=False needs plotly's static exporter"):
        plots.show(figure, interactive=False)
    with pytest.raises(ValueError, match="interactive must be None, True or False"):
        plots.show(figure, interactive="yes")


def test_show_draws_a_png_with_the_exporter(monkeypatch):
    if not figures._exporter_ready():
        pytest.skip("no Chrome/Chromium for plotly's exporter on this machine")
    import base64

    figure = plots.rank_shift_chart([3, 1, None], [1, 2, 2])
    shown = _displayed(monkeypatch)
    plots.show(figure)
    plots.show(figure, interactive=True)
    (bundle, metadata), (live, _) = shown
    assert set(bundle) == {plots.PNG_MIME, "text/plain"}  # no SVG: JupyterLab hides untrusted SVG
    png = base64.b64decode(bundle[plots.PNG_MIME])
    assert png.startswith(b"\x89PNG") and figures._png_size(png) == (640, 580)
    assert metadata[plots.PNG_MIME] == {"width": 640, "height": 580}
    assert bundle["text/plain"] == ("Picture: Rank of the gold paragraph, before → after "
                                    "reranking — 3 of 3 questions changed rank: 2 up, 1 down; a "
                                    "thicker line is more questions (a PNG image, 640×580 pixels).")
    assert set(live) == {plots.PLOTLY_MIME, "text/plain"}


def test_gold_relation_for_paragraphs_chunks_and_children():
    from course_lib.lab.show.widgets import gold_relation
    from course_lib.node import DocNode

    gold = "长城是古代中国修建的军事工程。东起山海关，西至嘉峪关。全长两万多公里。"
    paragraph = DocNode(gold, group="paragraph", uid="p")
    sentence = DocNode("全长两万多公里", group="sentence", uid="s", parent=paragraph)
    assert gold_relation(paragraph, gold) == "gold paragraph"
    assert gold_relation(sentence, gold) == "inside the gold paragraph"  # via its parent
    assert gold_relation("东起山海关，西至嘉峪关。", gold) == "inside the gold paragraph"
    assert gold_relation("前一段。\n" + gold + "\n后一段的开头", gold) == "holds the gold paragraph"
    assert gold_relation("前一段的结尾。\n长城是古代中国修建的军事工程。东起", gold) == \
        "part of the gold paragraph"
    assert gold_relation("别的段落的结尾。\n长城", gold) is None  # 2 characters prove nothing
    assert gold_relation("泰山位于山东。", gold) is None and gold_relation("x", "") is None


def test_explore_marks_gold_chunks_and_explains_empty_results(cmrc_kb):
    from course_lib.lab.show.widgets import explore

    question = cmrc_kb.questions[0]
    page = explore(cmrc_kb, question.question)
    assert "gold paragraph found: rank 1" in page and "class='course-gold'" in page
    assert "5 results · bm25-paragraph · top k 5 · no cut-off" in page
    custom = explore(cmrc_kb, question.question, "custom", "paragraph", "bm25_char", 3)
    assert custom.count("<tr") == 4 and "top k 3" in custom
    # chunks: a chunk inside (or holding) the gold paragraph is gold too
    for group in ("CoarseChunk", "FineChunk"):
        chunks = explore(cmrc_kb, question.question, "custom", group, "bm25_chinese", 5)
        assert "gold paragraph found: rank 1 (" in chunks, group
        assert chunks.count("class='course-gold'") >= 1
    fine = explore(cmrc_kb, question.question, "custom", "FineChunk", "bm25_chinese", 5)
    assert "inside the gold paragraph" in fine
    empty = explore(cmrc_kb, question.question, cut_off=1000.0)
    assert "<table" not in empty and "No results" in empty
    assert "every one of the 5 retrieved scored at or below the cut-off 1000" in empty
    assert "untick" in empty
    stranger = explore(cmrc_kb, "这个问题不在知识库里吗？")
    assert "no gold paragraph to mark" in stranger


def test_query_explorer_runs_once_per_setting_and_shows_working(cmrc_kb, monkeypatch):
    import course_lib.lab.show.widgets as widgets_module

    calls, seen, parts = [], [], []
    real = widgets_module.explore

    def counting(kb, question, pipeline, *rest):
        calls.append((question, pipeline, *rest[:-1]))
        if parts:  # what the panel showed while this ran
            output, controls = parts[0]
            seen.append((output.value, [c.disabled for c in controls]))
        return real(kb, question, pipeline, *rest)

    monkeypatch.setattr(widgets_module, "explore", counting)
    panel = widgets_module.query_explorer(cmrc_kb)
    (question, search), (pipeline, _, _), (topk, cut_off, use_cut), output = (
        panel.children[0].children, panel.children[1].children, panel.children[2].children,
        panel.children[3])
    parts.append((output, [question, search, pipeline, topk]))

    def controls():
        return parts[0][1]

    assert len(calls) == 1 and "gold paragraph found" in output.value
    assert question.continuous_update is False  # no retrieval per keystroke
    # while it runs: "working…" instead of the old results, controls disabled
    question.value = cmrc_kb.questions[7].question  # Enter / leaving the box
    assert len(calls) == 2
    assert "course-working" in seen[-1][0] and "working…" in seen[-1][0] and all(seen[-1][1])
    assert not any(c.disabled for c in controls())  # enabled again afterwards
    search.click()  # the click that followed: same settings, nothing to do
    assert len(calls) == 2
    topk.value = 3
    assert len(calls) == 3 and output.value.count("<tr") == 4 and "top k 3" in output.value
    use_cut.value, cut_off.value = True, 1000.0
    assert "No results" in output.value and "<table" not in output.value
    assert panel._repr_mimebundle_()["text/plain"].startswith(
        "An interactive query explorer (ipywidgets): run the cell in Jupyter to use it.")


class _CountingRAG:
    """A RAG stand-in that counts ``ask`` and records what the panel showed meanwhile."""

    def __init__(self, panel_parts):
        from course_lib.llm import OfflineLLM
        from course_lib.node import DocNode
        from course_lib.rag import MultiPathRAG

        self.inner = MultiPathRAG({"all": lambda q: [DocNode("长城东起山海关。", uid="a")
                                                     .with_score(2.0)]}, llm=OfflineLLM())
        self.asked, self.during, self.parts = [], [], panel_parts

    def ask(self, question):
        box, button, output = self.parts()
        self.asked.append(question)
        self.during.append((output.value, box.disabled, button.disabled))
        return self.inner.ask(question)


def test_chat_panel_asks_once_per_question():
    from course_lib.lab.show.widgets import chat_panel

    parts = []
    rag = _CountingRAG(lambda: parts[0])
    panel = chat_panel(rag)
    (box, button), output = panel.children[0].children, panel.children[1]
    parts.append((box, button, output))
    # type, then click "Ask": leaving the box submits, then the click arrives
    box.value = "长城东起哪里？"
    button.click()
    assert rag.asked == ["长城东起哪里？"] and "山海关" in output.value
    assert "questions asked in this panel: 1" in output.value and "data-asks='1'" in output.value
    assert rag.during[0][0].count("working…") == 1 and rag.during[0][1:] == (True, True)
    assert not box.disabled and not button.disabled
    button.click()  # a second click asks again, on purpose
    assert len(rag.asked) == 2 and "questions asked in this panel: 2" in output.value
    box.value = "长城西至哪里？"  # Enter on a new question: one more
    assert len(rag.asked) == 3
    box.value = "故宫在哪里？"
    button.click()
    assert rag.asked[3:] == ["故宫在哪里？"]  # a fresh panel: type + click = one ask
    box.value = "  "
    assert "Type a question first" in output.value and len(rag.asked) == 4
    text = panel._repr_mimebundle_()["text/plain"]
    assert text.startswith("An interactive chat panel") and "VBox" not in text


def _label_boxes(figure):
    """Each annotation's box in pixels, as threshold_chart placed it."""
    layout = figure.layout
    width = layout.width - layout.margin.l - layout.margin.r
    height = layout.height - layout.margin.t - layout.margin.b
    (x0, x1), (y0, y1) = layout.xaxis.range, layout.yaxis.range
    boxes = []
    for a in layout.annotations:
        spot = ({"bottom": "top", "middle": "middle", "top": "bottom"}[a.yanchor] + " "
                + {"right": "left", "center": "center", "left": "right"}[a.xanchor])
        gap = max(abs(a.xshift or 0), abs(a.yshift or 0)) or plots.LABEL_GAP
        x, y = (a.x - x0) / (x1 - x0) * width, (y1 - a.y) / (y1 - y0) * height
        boxes.append((a.text, figures._label_box(x, y, a.text, spot, gap), (x, y)))
    return boxes


def test_threshold_slider_names_its_curve_and_keeps_labels_apart():
    from course_lib.lab.show.widgets import threshold_slider

    # 0 and 0.1 coincide; 0.2 lies 5 px away; the chosen point gets a 20-px circle
    rows = [{"cut_off": c, "recall@5": r, "context_relevance@5": x, "mean_kept": m}
            for c, r, x, m in ((0.0, 0.92, 0.19, 5), (0.1, 0.92, 0.19, 5), (0.2, 0.915, 0.195, 4.8),
                               (0.3, 0.9, 0.3, 3), (2.0, 0.8, 0.9, 1))]
    slider = threshold_slider(rows, name="cosine (e5)")
    control, label, chart = slider.children
    assert control.continuous_update is False  # the chart is redrawn on release
    control.value = 0.2
    assert label.value.startswith("cut-off 0.2: recall@5 0.915, context relevance@5 0.195")
    figure = plots.threshold_chart({"cosine (e5)": rows}, chosen=0.2)
    names = [t.name for t in figure.data]
    assert names[:2] == ["cosine (e5)", "chosen: cut-off 0.2"] and not any(
        "sweep" in n for n in names)
    assert plots.threshold_chart(rows).data[0].name == "score cut-off"
    boxes = _label_boxes(figure)
    texts = [text for text, _, _ in boxes]
    assert "0.2" in texts and "2" in texts  # the chosen point's label comes first
    assert "0–0.1" not in texts  # no room left beside the circle: hover shows it
    assert not any(figures._overlaps(a, [b]) for i, (_, a, _) in enumerate(boxes)
                   for _, b, _ in boxes[i + 1:])
    (cx, cy), = [xy for text, _, xy in boxes if text == "0.2"]
    circle = (cx - 12, cy - 12, cx + 12, cy + 12)
    assert not any(figures._overlaps(box, [circle]) for _, box, _ in boxes)
    with pytest.raises(ValueError, match="chosen=0.5 is not one of the first curve's cut-offs"):
        plots.threshold_chart(rows, chosen=0.5)
    assert "over 5 cut-offs, 0 to 2" in slider._repr_mimebundle_()["text/plain"]


@pytest.fixture(autouse=True)
def _isolated_comparison():
    plots.clear_recorded()
    yield
    plots.clear_recorded()
