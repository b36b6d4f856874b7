"""How a chart is shown and laid out (course_lib.lab.show.figures), from new angles beside
test_plots.py: what figure_bundle hands the notebook with and without plotly's exporter (the
exporter check monkeypatched, the export faked with a PNG built here), the plain-text
sentence naming the chart, compact_png on PNG kinds test_plots does not build (RGB, the Sub
filter, 16-bit, interlaced, broken) and on one real exported chart, and the point-label
placement: the annotation sits exactly in the box the placement reserved, and no two labels,
markers or lines overlap on random layouts.
"""

from __future__ import annotations

import base64
import io
import json
import random
import struct
import warnings
import zlib

import numpy as np
import plotly.graph_objects as go
import pytest

from course_lib.lab.show import figures
from course_lib.lab.show.figures import (
    PLOTLY_MIME,
    PNG_MIME,
    compact_png,
    describe,
    figure_bundle,
    show,
)

# ---------------------------------------------------------------- PNG helpers (no PIL needed)


def _encode(pixels: np.ndarray, filters: list[int] | None = None, depth: int = 8,
            interlace: int = 0) -> bytes:
    """A PNG of ``pixels`` (height x width x 3 or 4, uint8), each row with its filter
    (0 None, 1 Sub, 2 Up)."""
    height, width, channels = pixels.shape
    filters = filters or [0] * height
    rows = []
    for y in range(height):
        row = pixels[y].reshape(-1).astype(np.int16)
        if filters[y] == 1:
            row = row - np.concatenate([np.zeros(channels, np.int16), row[:-channels]])
        elif filters[y] == 2:
            row = row - (pixels[y - 1].reshape(-1).astype(np.int16) if y else 0)
        rows.append(bytes([filters[y]]) + (row % 256).astype(np.uint8).tobytes())
    kind = {3: 2, 4: 6}[channels]
    header = struct.pack(">IIBBBBB", width, height, depth, kind, 0, 0, interlace)
    return (b"\x89PNG\r\n\x1a\n" + figures._png_chunk(b"IHDR", header)
            + figures._png_chunk(b"IDAT", zlib.compress(b"".join(rows)))
            + figures._png_chunk(b"IEND", b""))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _decode(png: bytes) -> np.ndarray:
    """Any 8-bit non-interlaced PNG (RGB, RGBA or indexed, every filter) as RGB pixels:
    an independent reader, so compact_png is not checked against its own decoder."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    chunks = figures._png_chunks(png)
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    for kind, data in chunks:  # every chunk's CRC is right
        start = png.index(kind + data) - 4
        (crc,) = struct.unpack(">I", png[start + 8 + len(data):start + 12 + len(data)])
        assert crc == zlib.crc32(kind + data) & 0xFFFFFFFF
    width, height, depth, kind, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert depth == 8 and not interlace
    channels = {2: 3, 6: 4, 3: 1}[kind]
    raw = zlib.decompress(b"".join(d for k, d in chunks if k == b"IDAT"))
    stride = width * channels
    assert len(raw) == height * (stride + 1)
    out = np.zeros((height, stride), np.int64)
    for y in range(height):
        method, row = raw[y * (stride + 1)], list(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        up = out[y - 1] if y else np.zeros(stride, np.int64)
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            corner = int(up[i - channels]) if i >= channels else 0
            predictor = [0, left, int(up[i]), (left + int(up[i])) // 2,
                         _paeth(left, int(up[i]), corner)][method]
            row[i] = (row[i] + predictor) % 256
        out[y] = row
    if kind == 3:
        palette = np.frombuffer(dict(chunks)[b"PLTE"], np.uint8).reshape(-1, 3)
        return palette[out.astype(np.uint8)]
    return out.reshape(height, width, channels)[..., :3].astype(np.uint8)


def _chart_like(height: int = 24, width: int = 40, seed: int = 0) -> np.ndarray:
    """A few flat colours on white, with a thin anti-aliased (many-colour) edge."""
    rng = np.random.default_rng(seed)
    pixels = np.full((height, width, 3), 255, np.uint8)
    pixels[4:12, 5:30] = (76, 114, 176)
    pixels[14:20, 5:20] = (213, 94, 0)
    pixels[12, 5:30] = rng.integers(150, 230, size=(25, 3))  # 25 edge shades
    return pixels


# ---------------------------------------------------------------- figure_bundle and show


def _fake_export(monkeypatch, png: bytes) -> list[dict]:
    """An exporter that is ready and returns ``png``; the calls it got."""
    calls: list[dict] = []

    def to_image(self, **options):
        calls.append(options)
        return png

    monkeypatch.setattr(figures, "_exporter_ready", lambda: True)
    monkeypatch.setattr(go.Figure, "to_image", to_image)
    monkeypatch.delenv(figures.PLOTS_ENV, raising=False)
    return calls


def test_with_an_exporter_the_bundle_is_the_compacted_png_and_a_sentence(monkeypatch):
    pixels = _chart_like()
    png = _encode(pixels, [2] * len(pixels))
    calls = _fake_export(monkeypatch, png)
    figure = figures._figure("Recall@5 of <i>two</i> pipelines", "1,000 questions")
    bundle, metadata = figure_bundle(figure, width=400, height=300)
    assert calls == [{"format": "png", "width": 400, "height": 300}]
    assert set(bundle) == {PNG_MIME, "text/plain"}
    shipped = base64.b64decode(bundle[PNG_MIME], validate=True)
    assert shipped == compact_png(png) and len(shipped) < len(png)
    assert (_decode(shipped) == pixels).all()  # 28 colours: the palette keeps them all
    assert metadata == {PNG_MIME: {"width": 40, "height": 24}}  # the picture's, not asked
    assert bundle["text/plain"] == ("Picture: Recall@5 of two pipelines — 1,000 questions "
                                    "(a PNG image, 40×24 pixels).")


def test_interactive_false_insists_on_the_picture_even_when_the_environment_asks_for_live(
        monkeypatch):
    calls = _fake_export(monkeypatch, _encode(_chart_like()))
    monkeypatch.setenv(figures.PLOTS_ENV, "  Interactive ")  # case and spaces do not matter
    figure = figures._figure("A chart")
    assert set(figure_bundle(figure)[0]) == {PLOTLY_MIME, "text/plain"} and not calls
    assert set(figure_bundle(figure, interactive=False)[0]) == {PNG_MIME, "text/plain"}
    monkeypatch.setenv(figures.PLOTS_ENV, "static")  # any other value: the default picture
    assert set(figure_bundle(figure)[0]) == {PNG_MIME, "text/plain"} and len(calls) == 2


def test_without_an_exporter_the_bundle_is_plotly_json_sized_as_asked(monkeypatch):
    monkeypatch.setattr(figures, "_exporter_ready", lambda: False)
    monkeypatch.delenv(figures.PLOTS_ENV, raising=False)
    figure = figures._figure("Scores", width=700)
    figure.add_scatter(x=["a", "b", "c"], y=[0.5, 0.25, 0.125])
    figure.add_scatter(x=np.arange(3), y=np.array([0.5, 0.25, 0.125]))
    bundle, metadata = figure_bundle(figure, height=320)
    assert set(bundle) == {PLOTLY_MIME, "text/plain"} and metadata == {}
    spec = bundle[PLOTLY_MIME]
    assert json.loads(json.dumps(spec)) == spec  # plain JSON, numpy arrays included
    assert spec["data"][0]["y"] == [0.5, 0.25, 0.125] and len(spec["data"]) == 2
    assert spec["layout"]["width"] == 700 and spec["layout"]["height"] == 320
    assert spec["config"] == {"displaylogo": False}
    assert bundle["text/plain"] == ("Interactive chart: Scores (drawn by plotly's JupyterLab "
                                    "extension, offline).")
    assert "width" not in figure_bundle(figures._figure("Scores"))[0][PLOTLY_MIME]["layout"]


def test_show_displays_the_bundle_raw_with_its_metadata(monkeypatch):
    import IPython.display

    seen = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda *objects, **options: seen.append((objects, options)))
    _fake_export(monkeypatch, _encode(_chart_like()))
    figure = figures._figure("Shown")
    show(figure, width=200, height=100)
    ((bundle,), options), = seen
    assert options == {"raw": True, "metadata": {PNG_MIME: {"width": 40, "height": 24}}}
    assert bundle["text/plain"].startswith("Picture: Shown (")


@pytest.mark.parametrize("title, subtitle, sentence", [
    ("Recall<br>at 5", None, "Recall at 5"),
    ("Line one<br/>line   two", "per <b>question</b>", "Line one line two — per question"),
    ("", None, "a plotly figure without a title"),
    ("<b></b>", None, "a plotly figure without a title"),
    ("`code` free", None, "code free"),
])
def test_describe_is_one_plain_sentence(title, subtitle, sentence):
    assert describe(figures._figure(title, subtitle)) == sentence
    bare = go.Figure()
    assert describe(bare) == "a plotly figure without a title"


# ---------------------------------------------------------------- compact_png


def test_an_rgb_image_with_sub_rows_is_compacted_and_decodes_to_the_same_pixels():
    pixels = _chart_like(seed=1)
    png = _encode(pixels, [1, 2, 0] * 8)
    small = compact_png(png)
    assert small != png and len(small) <= len(png)
    assert figures._png_size(small) == figures._png_size(png) == (40, 24)
    assert (_decode(png) == pixels).all()  # the helper reads what it wrote
    assert (_decode(small) == pixels).all()
    assert compact_png(small) == small  # already indexed: left as it is


def test_a_small_palette_is_used_only_where_it_changes_nothing_visible():
    pixels = _chart_like()  # 28 colours
    png = _encode(pixels)
    assert compact_png(png, colours=2) == png  # 2 colours would blur the bars' colours away
    flat = np.full((10, 10, 3), 255, np.uint8)
    flat[2:5] = (0, 0, 0)
    flat[0, 0] = (254, 255, 255)  # one pixel one level off: invisible
    small = compact_png(_encode(flat), colours=2)
    palette = dict(figures._png_chunks(small))[b"PLTE"]
    assert len(palette) == 2 * 3 and np.abs(_decode(small).astype(int) - flat).max() == 1


@pytest.mark.parametrize("png", [
    _encode(np.zeros((4, 4, 3), np.uint8), depth=16),  # (declared) 16-bit
    _encode(np.zeros((4, 4, 3), np.uint8), interlace=1),
    _encode(_chart_like())[:60],  # cut short
    b"\x89PNG\r\n\x1a\n" + b"\x00" * 30,
    b"",
])
def test_what_compact_png_does_not_handle_comes_back_unchanged(png):
    assert compact_png(png) == png


@pytest.fixture(scope="module")
def exported():
    """One chart exported by plotly's real exporter (skipped where it cannot run)."""
    if not figures._exporter_ready():
        pytest.skip("no Chrome/Chromium for plotly's exporter on this machine")
    figure = figures._figure("Two bars", "an exported chart", width=260, height=180)
    figure.add_bar(x=["a", "b"], y=[0.4, 0.9], marker_color=[figures.PLAIN, figures.HIGHLIGHT])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kaleido's notes about its server options
        return figure.to_image(format="png", width=260, height=180)


def test_a_real_exported_chart_compacts_without_visible_change(exported):
    small = compact_png(exported)
    assert len(small) <= len(exported)
    assert figures._png_size(small) == figures._png_size(exported) == (260, 180)
    before, after = _decode(exported).astype(int), _decode(small).astype(int)
    error = np.abs(before - after).max(axis=2)
    assert error.mean() <= 1.0 and (error > 40).mean() <= 0.01  # the documented bound


def test_pil_reads_the_compacted_picture_at_its_size(exported):
    image_module = pytest.importorskip("PIL.Image")
    small = compact_png(exported)
    with image_module.open(io.BytesIO(small)) as image:
        image.load()
        assert image.size == (260, 180)
        decoded = np.asarray(image.convert("RGB")).astype(int)
    assert np.abs(decoded - _decode(exported).astype(int)).max(axis=2).mean() <= 1.0


# ---------------------------------------------------------------- point labels


def _text_extent(annotation: dict, x: float, y: float) -> tuple[float, float, float, float]:
    """Where plotly draws an annotation's text, in pixels with y down: from its anchors and
    shifts (plotly's yshift points up), for a text FONT_PX per character and 16 px high."""
    width, height = figures.FONT_PX * len(annotation["text"]) + 2, 16.0
    left = x + annotation["xshift"] - {"left": 0, "center": width / 2,
                                       "right": width}[annotation["xanchor"]]
    bottom = y - annotation["yshift"] + {"bottom": 0, "middle": height / 2,
                                         "top": height}[annotation["yanchor"]]
    return left, bottom - height, left + width, bottom


@pytest.mark.parametrize("spot", figures._SPOTS)
@pytest.mark.parametrize("gap", [figures.LABEL_GAP, figures.CHOSEN_GAP])
def test_each_label_is_drawn_inside_the_box_the_placement_reserved(spot, gap):
    annotation = figures._label(120, 80, "0.875", spot, "#000000", gap)
    assert annotation["showarrow"] is False and annotation["font"] == {"color": "#000000"}
    left, top, right, bottom = figures._label_box(120, 80, "0.875", spot, gap)
    assert _text_extent(annotation, 120, 80) == pytest.approx(
        (left + 2, top + 2, right - 2, bottom - 2))  # 2 px to spare on every side
    assert not (left < 120 < right and top < 80 < bottom)  # never on its own point


def test_the_first_free_spot_is_taken_and_markers_push_labels_aside():
    size = (400, 300)
    assert figures._label_spots([(200, 150)], ["x"], [], [], size) == ["top center"]
    above = figures._label_box(200, 150, "x", "top center")
    obstacles = [above]
    assert figures._label_spots([(200, 150)], ["x"], obstacles, [], size) == ["bottom center"]
    assert obstacles[-1] == figures._label_box(200, 150, "x", "bottom center")  # it grew
    # in a corner, only the spots that stay on the chart
    assert figures._label_spots([(2, 2)], ["corner"], [], [], size) == ["bottom right"]
    assert figures._label_spots([(2, 2)], ["far too long a label" * 30], [], [], size) == [None]
    # a bigger gap keeps a label further out (around the chosen point's circle)
    near = figures._label_box(200, 150, "x", "top center", figures.LABEL_GAP)
    far = figures._label_box(200, 150, "x", "top center", figures.CHOSEN_GAP)
    assert far[3] == near[3] - (figures.CHOSEN_GAP - figures.LABEL_GAP)


def test_random_layouts_never_get_overlapping_or_line_crossing_labels():
    rng = random.Random(7)
    size = (500, 320)
    for _ in range(30):
        points = [(rng.uniform(0, size[0]), rng.uniform(0, size[1])) for _ in range(12)]
        texts = [f"{rng.random():.{rng.randint(1, 3)}f}" for _ in points]
        markers = [(x - 3, y - 3, x + 3, y + 3) for x, y in points]  # 6-px dots
        lines = [(rng.uniform(0, 500), rng.uniform(0, 320), rng.uniform(0, 500),
                  rng.uniform(0, 320)) for _ in range(2)]
        gaps = [rng.choice((figures.LABEL_GAP, figures.CHOSEN_GAP)) for _ in points]
        spots = figures._label_spots(points, texts, list(markers), lines, size, gaps)
        assert len(spots) == len(points)
        boxes = [figures._label_box(x, y, t, s, g)
                 for (x, y), t, s, g in zip(points, texts, spots, gaps, strict=True) if s]
        assert boxes, "some label should fit"
        for i, box in enumerate(boxes):
            assert box[0] >= 0 and box[1] >= 0 and box[2] <= size[0] and box[3] <= size[1]
            assert not figures._overlaps(box, markers + boxes[:i] + boxes[i + 1:])
            for x0, y0, x1, y1 in lines:  # no point of a line strictly inside a label
                for t in np.linspace(0, 1, 400):
                    x, y = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
                    assert not (box[0] + 1 < x < box[2] - 1 and box[1] + 1 < y < box[3] - 1)


def test_the_tick_step_cuts_a_span_into_at_most_three_parts():
    assert [figures._step(s) for s in (0.1, 0.3, 1.0)] == [0.05, 0.1, 0.5]  # the docstring's
    for span in (0.02, 0.07, 0.15, 0.45, 0.8, 2.5, 7.0):
        step = figures._step(span)
        assert span / step <= 3 + 1e-9 and (step == 0.01 or span / step > 1)
    assert figures._step(100.0) == 100.0  # beyond the round steps: one part
