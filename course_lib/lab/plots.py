"""The course's pictures (plotly), and a way to show them that works anywhere, offline.

:func:`show` draws a figure as a PNG picture when plotly's static exporter (kaleido,
which drives a local Chrome/Chromium) is available. A PNG displays in a notebook nobody
has run or trusted yet (JupyterLab will not render SVG or scripts from an untrusted
notebook) and on GitHub. Without the exporter it shows plotly's interactive figure as
``application/vnd.plotly.v1+json``, which plotly's JupyterLab extension (installed with
plotly) draws with its own copy of plotly.js: no network, no CDN. Either way the plain-text
part of the output is a sentence naming the chart, not an object's repr.

Every chart function takes plain numbers (results of :func:`course_lib.evaluate`,
sweeps, ranks) and returns a ``plotly.graph_objects.Figure``. They are drawn to be read
as static pictures: values printed on the bars, room left for every label, point labels
that never overlap, at most eight pipelines at once, titles that say what is compared.
"""

from __future__ import annotations

import atexit
import base64
import json
import math
import os
import re
import struct
import warnings
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

CHAPTER_CUT_OFF_POINT = (0.87, 0.88)  # (context relevance@5, recall@5) with bge cosine > 0.4

PNG_MIME, PLOTLY_MIME = "image/png", "application/vnd.plotly.v1+json"
PLOTS_ENV = "COURSE_PLOTS"  # "interactive": show() draws interactive figures by default


def show(figure: Any, width: int | None = None, height: int | None = None,
         interactive: bool | None = None) -> None:
    """Display ``figure`` in a notebook: as a PNG picture when plotly's exporter works,
    otherwise as the interactive figure (plotly's JupyterLab extension, offline).

    ``interactive=True`` always shows the interactive figure (zoom, hover for values);
    ``interactive=False`` insists on the picture. The environment variable
    ``COURSE_PLOTS=interactive`` makes the interactive figure the default (e.g. to check in
    a browser what a machine without Chromium shows). See :func:`figure_bundle`.
    """
    from IPython.display import display

    bundle, metadata = figure_bundle(figure, width, height, interactive)
    display(bundle, raw=True, metadata=metadata)


def figure_bundle(figure: Any, width: int | None = None, height: int | None = None,
                  interactive: bool | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """What :func:`show` displays, as ``(mime bundle, metadata)``.

    With plotly's static exporter (``interactive`` None or False): ``image/png`` (base64)
    and a ``text/plain`` sentence. Otherwise (no exporter, or ``interactive=True``): the
    figure as ``application/vnd.plotly.v1+json`` and the sentence; never HTML that loads
    plotly.js from a CDN, which stays blank offline.

    >>> bundle, _ = figure_bundle(_figure("Recall@5 of two pipelines"), interactive=True)
    >>> sorted(bundle)
    ['application/vnd.plotly.v1+json', 'text/plain']
    >>> print(bundle["text/plain"])
    Interactive chart: Recall@5 of two pipelines (drawn by plotly's JupyterLab extension, offline).
    """
    if interactive not in (None, True, False):
        raise ValueError(f"interactive must be None, True or False, got {interactive!r}")
    if interactive is None and os.environ.get(PLOTS_ENV, "").strip().lower() == "interactive":
        interactive = True
    failure: Exception | None = None
    if interactive is not True and _exporter_ready():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # kaleido's notes about its server options
                png = compact_png(figure.to_image(format="png", width=width, height=height))
        except Exception as error:  # the browser died, say: the interactive figure still works
            failure = error
        else:
            size = _png_size(png)
            text = f"Picture: {describe(figure)} (a PNG image, {size[0]}×{size[1]} pixels)."
            return ({PNG_MIME: base64.b64encode(png).decode("ascii"), "text/plain": text},
                    {PNG_MIME: {"width": size[0], "height": size[1]}})
    if interactive is False:
        raise RuntimeError("interactive=False needs plotly's static exporter: kaleido and a "
                           "local Chrome/Chromium (apt-get install chromium, or run "
                           "kaleido_get_chrome); without them call show(figure) for the "
                           "interactive figure" + (f" (the export failed: {failure})"
                                                   if failure else "")) from failure
    spec = json.loads(figure.to_json())  # plain JSON: numpy arrays become lists
    if width or height:
        spec.setdefault("layout", {}).update({k: v for k, v in (("width", width),
                                                                 ("height", height)) if v})
    spec["config"] = {"displaylogo": False}
    text = (f"Interactive chart: {describe(figure)} (drawn by plotly's JupyterLab extension, "
            "offline).")
    return {PLOTLY_MIME: spec, "text/plain": text}, {}


def describe(figure: Any) -> str:
    """A figure's title and subtitle as one plain sentence (no HTML, no markdown).

    >>> describe(_figure("Rank of the <b>gold</b> paragraph", "200 questions"))
    'Rank of the gold paragraph — 200 questions'
    """
    title = figure.layout.title
    parts = [title.text or "", (title.subtitle.text or "") if title.subtitle else ""]
    text = " — ".join(re.sub(r"<br\s*/?>", " ", p) for p in parts if p)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip()
    return text or "a plotly figure without a title"


def _png_size(png: bytes) -> tuple[int, int]:
    width, height = struct.unpack(">II", png[16:24])  # IHDR: the first chunk, always
    return width, height


def _png_chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    chunks, pos = [], 8
    while pos + 8 <= len(png):
        (length,), kind = struct.unpack(">I", png[pos:pos + 4]), png[pos + 4:pos + 8]
        chunks.append((kind, png[pos + 8:pos + 8 + length]))
        pos += 12 + length
    return chunks


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def compact_png(png: bytes, colours: int = 256) -> bytes:
    """``png`` with at most ``colours`` colours (an indexed PNG), when that loses nothing
    visible; else ``png`` unchanged.

    A chart is a few flat colours on white plus the anti-aliased edges between them: a
    palette of its 256 most frequent colours, each other pixel mapped to the nearest,
    looks the same and takes about a third of the bytes (a notebook commits every
    picture). Only plain 8-bit opaque RGB(A) images whose rows use the PNG filters None,
    Sub or Up are converted (what Chromium writes); anything else is returned as it is,
    as is any image the palette would change visibly (mean error over 1 level, or more
    than 1 % of its pixels off by over 40 levels).

    >>> compact_png(b"not a png") == b"not a png"
    True
    """
    try:
        return _compact_png(png, colours) or png
    except Exception:  # an unexpected file: keep the exporter's picture
        return png


def _compact_png(png: bytes, colours: int) -> bytes | None:
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    chunks = _png_chunks(png)
    width, height, depth, kind, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if depth != 8 or kind not in (2, 6) or interlace:
        return None
    channels = 4 if kind == 6 else 3
    raw = np.frombuffer(zlib.decompress(b"".join(d for k, d in chunks if k == b"IDAT")),
                        np.uint8).reshape(height, width * channels + 1)
    if not set(np.unique(raw[:, 0]).tolist()) <= {0, 1, 2}:
        return None  # Average or Paeth rows: not worth undoing in Python
    pixels = np.zeros((height, width, channels), np.uint8)
    previous = np.zeros((width, channels), np.uint8)
    for y in range(height):  # undo each row's filter (uint8 sums wrap, as PNG's do)
        row = raw[y, 1:].reshape(width, channels)
        if raw[y, 0] == 1:
            row = np.cumsum(row, axis=0, dtype=np.uint8)
        elif raw[y, 0] == 2:
            row = row + previous
        pixels[y] = previous = row
    if channels == 4 and (pixels[..., 3] != 255).any():
        return None  # transparency: keep it exact
    rgb = pixels[..., :3].reshape(-1, 3).astype(np.int32)
    keys = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
    unique, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    palette_keys = unique[np.argsort(-counts, kind="stable")[:colours]]
    palette = np.stack([(palette_keys >> 16) & 255, (palette_keys >> 8) & 255,
                        palette_keys & 255], axis=1)
    each = np.stack([(unique >> 16) & 255, (unique >> 8) & 255, unique & 255], axis=1)
    nearest = np.empty(len(unique), np.int64)
    for start in range(0, len(unique), 4096):  # bounded memory: 4096 × 256 distances
        part = each[start:start + 4096]
        nearest[start:start + 4096] = ((part[:, None, :] - palette[None]) ** 2).sum(-1).argmin(1)
    error = np.abs(palette[nearest] - each).max(axis=1)[inverse.reshape(-1)]
    if error.mean() > 1.0 or (error > 40).mean() > 0.01:
        return None
    index = nearest[inverse.reshape(-1)].astype(np.uint8).reshape(height, width)
    rows = np.zeros((height, width + 1), np.uint8)  # filter byte 0 (None) on every row
    rows[:, 1:] = index
    return (png[:8] + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
            + _png_chunk(b"PLTE", palette.astype(np.uint8).tobytes())
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)) + _png_chunk(b"IEND", b""))


_EXPORTER: list[bool] = []


def _exporter_ready() -> bool:
    """Start one headless browser for all exports, once (1.5 s, then 0.1 s per figure);
    remember a failure so a machine without Chrome does not retry every time."""
    if not _EXPORTER:
        try:
            import kaleido
            from choreographer.browsers.chromium import Chromium

            # Without a browser kaleido's server thread dies and exports wait forever:
            # look for one first.
            if Chromium.find_browser(skip_local=False) is None:
                raise RuntimeError("no Chrome/Chromium for plotly's exporter")
            kaleido.start_sync_server(silence_warnings=True)
            atexit.register(kaleido.stop_sync_server, silence_warnings=True)
            _EXPORTER.append(True)
        except Exception:
            _EXPORTER.append(False)
    return _EXPORTER[0]


# ---------------------------------------------------------------- layout helpers
HIGHLIGHT = "#D55E00"  # the best pipeline, the gold paragraph (vermilion, colour-blind safe)
PLAIN = "#4C72B0"
MUTED = "#BBBBBB"
FONT_PX = 6.6  # mean width of a character at plotly's default 12 px font, for laying out labels


def _clean(text: str) -> str:
    """Chart text is not markdown: a backtick would print literally, so drop it."""
    return text.replace("`", "")


def _figure(title: str = "", subtitle: str | None = None, **layout: Any) -> Any:
    """An empty white figure with a title (and a smaller line under it)."""
    import plotly.graph_objects as go

    heading: dict[str, Any] = {"text": _clean(title)}
    if subtitle:
        heading["subtitle"] = {"text": _clean(subtitle)}
    margin = {"l": 70, "r": 30, "t": 90 if subtitle else 60, "b": 55}
    margin.update(layout.pop("margin", {}))
    figure = go.Figure()
    figure.update_layout(template="plotly_white", title=heading, margin=margin, **layout)
    return figure


def _step(span: float, ticks: int = 3) -> float:
    """A round tick step that cuts ``span`` into at most ``ticks`` parts (so labels never
    crowd): 0.05 for 0.1, 0.1 for 0.3, 0.5 for 1."""
    return next((s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0)
                 if span / s <= ticks + 1e-9), span)


def _axis_start(smallest: float) -> float:
    """Where an axis of shares (0–1) should start: at 0, unless every value is at least 0.5
    (then at a round value just below the smallest, so that 0.97 and 0.99 look different).

    >>> _axis_start(0.3), _axis_start(0.966), _axis_start(0.756)
    (0.0, 0.9, 0.7)
    """
    if smallest < 0.5:
        return 0.0
    return round(math.floor((smallest - 0.02) / 0.05) * 0.05, 2)


# ---------------------------------------------------------------- this notebook's comparison
# In memory, per Python process: what a notebook shows depends only on its own cells.
# (A shared file on disk made one notebook's chart depend on which others had run.)
_RECORDED: dict[str, dict[str, float]] = {}
_PER_QUESTION: dict[str, dict[str, list[float]]] = {}  # the same results, question by question


def record(result: dict[str, Any], label: str | None = None) -> None:
    """Add an evaluation result (recall@k, MRR@k) to this session's comparison chart — and
    its per-question columns, when it has them, so the chart can test its best bar.

    >>> clear_recorded(); record({"pipeline": "bm25", "recall@1": 0.9, "seconds": 2.0})
    >>> recorded()
    {'bm25': {'recall@1': 0.9}}
    """
    keep = {k: v for k, v in result.items() if k.startswith(("recall@", "mrr@"))}
    name = label or result["pipeline"]
    _RECORDED[name] = keep
    _PER_QUESTION[name] = {k: list(v) for k, v in result.get("per_question", {}).items()
                           if k in keep}


def recorded() -> dict[str, dict[str, float]]:
    """What :func:`record` collected in this Python process (a copy)."""
    return {name: dict(scores) for name, scores in _RECORDED.items()}


def clear_recorded() -> None:
    """Forget every recorded result."""
    _RECORDED.clear()
    _PER_QUESTION.clear()


def best_detectable(results: dict[str, dict[str, Any]], ranked: Sequence[str], metric: str
                    ) -> tuple[bool, str]:
    """Whether the first of ``ranked`` is detectably above the second on ``metric`` — a
    paired test over the same questions (:func:`~course_lib.lab.significance.compare_pair`,
    p < 0.05) — and a few words saying so. Without both per-question columns (or with one
    pipeline) nothing can be tested: ``False``.

    >>> results = {"a": {"per_question": {"recall@1": [1.0] * 30}},
    ...            "b": {"per_question": {"recall@1": [0.0] * 30}}}
    >>> best_detectable(results, ["a", "b"], "recall@1")
    (True, 'best: a, detectably above b (paired test, p <0.001)')
    """
    from .significance import compare_pair
    from .wins import format_p

    if len(ranked) < 2:
        return False, f"only {ranked[0]}" if ranked else "nothing to compare"
    first, second = ranked[0], ranked[1]
    columns = [results[n].get("per_question", {}).get(metric, _PER_QUESTION.get(n, {}).get(metric))
               for n in (first, second)]
    if any(c is None for c in columns) or len(columns[0]) != len(columns[1]):
        return False, f"highest: {first} (not tested: no per-question results)"
    p = compare_pair(columns[0], columns[1])["p"]
    if p < 0.05:
        return True, f"best: {first}, detectably above {second} (paired test, p {format_p(p)})"
    return False, (f"highest: {first}, no detectable difference from {second} (paired test, "
                   f"p {format_p(p)}): none highlighted")


def comparison_chart(results: dict[str, dict[str, float]] | None = None,
                     ks: Sequence[int] = (1, 3, 5), limit: int = 8) -> Any:
    """One panel per metric (recall@k for each k, then MRR@max k), one bar per pipeline.

    Pipelines are sorted by recall@min k (ties: the next metrics, then the name); the first
    is highlighted only when a paired test says it is detectably above the second
    (:func:`best_detectable`; the subtitle says which); at most ``limit`` are drawn (the
    best ones, and the subtitle says so).
    Every bar carries its value; when all values are high the axis starts above 0, and
    the subtitle says where.
    """
    from plotly.subplots import make_subplots

    results = recorded() if results is None else results
    metrics = [m for m in [*(f"recall@{k}" for k in ks), f"mrr@{max(ks)}"]
               if any(m in scores for scores in results.values())]
    if not metrics:
        figure = _figure("Recall@k and MRR@k on CMRC 2018", width=820, height=240)
        figure.add_annotation(text="Nothing recorded yet: plots.record(evaluate(kb, name)) first.",
                              showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
        return figure
    ranked = sorted(results, key=lambda name: (*(-results[name].get(m, -1.0) for m in metrics),
                                               name))
    shown = ranked[:limit]
    values = [results[n][m] for n in shown for m in metrics if m in results[n]]
    start, top = _axis_start(min(values)), max(1.0, max(values))  # shares: up to 1
    step = _step(top - start)
    detectable, verdict = best_detectable(results, ranked, metrics[0])
    notes = [f"sorted by {metrics[0]}; {verdict}" + (" (highlighted)" if detectable else "")]
    if len(ranked) > len(shown):
        notes.append(f"the {len(shown)} best of {len(ranked)} pipelines")
    if start > 0:
        notes.append(f"bars start at {start:g}")
    figure = make_subplots(rows=1, cols=len(metrics), shared_yaxes=True, horizontal_spacing=0.06,
                           subplot_titles=[m.replace("mrr", "MRR") for m in metrics])
    figure.update_layout(template="plotly_white", width=820, height=150 + 34 * len(shown),
                         title={"text": "Recall@k and MRR@k on CMRC 2018",
                                "subtitle": {"text": _clean(" · ".join(notes))}},
                         margin={"l": 20, "r": 20, "t": 110, "b": 40}, showlegend=False,
                         bargap=0.25)
    for column, metric in enumerate(metrics, start=1):
        names = [n for n in shown if metric in results[n]]
        figure.add_bar(x=[results[n][metric] for n in names], y=names, orientation="h",
                       name=metric, text=[f"{results[n][metric]:.3f}" for n in names],
                       # inside the bar's end where it fits (a third of the panel), else after it
                       textposition=["inside" if (results[n][metric] - start) / (top - start)
                                     > 0.35 else "outside" for n in names],
                       insidetextanchor="end", constraintext="none",
                       textfont={"size": 11}, cliponaxis=False,
                       marker={"color": [HIGHLIGHT if detectable and n == shown[0] else PLAIN
                                         for n in names]},
                       hovertemplate="%{y}: %{x:.4f}<extra>" + metric + "</extra>",
                       row=1, col=column)
        figure.update_xaxes(range=[start, top], dtick=step, tick0=start,
                            tickformat=".2f" if step < 0.1 else ".1f", row=1, col=column)
    figure.update_yaxes(autorange="reversed", automargin=True, tickvals=shown,
                        ticktext=[f"<b>{_clean(n)}</b>" if detectable and i == 0 else _clean(n)
                                  for i, n in enumerate(shown)])
    return figure


# ---------------------------------------------------------------- single charts
_SPOTS = ("top center", "bottom center", "middle right", "middle left",
          "top right", "top left", "bottom right", "bottom left")


Box = tuple[float, float, float, float]  # left, top, right, bottom, in pixels (y down)


LABEL_GAP = 5  # pixels between a point and its label
CHOSEN_GAP = 15  # ... and around the chosen point's open circle (20 px wide, 2 px line)


def _label_box(x: float, y: float, text: str, spot: str, gap: float = LABEL_GAP) -> Box:
    """The box of :func:`_label` at ``spot`` ("top center", ...) around the point (x, y),
    with 2 px to spare on every side so that labels keep clear of each other and of lines."""
    width, height = FONT_PX * len(text) + 2, 16.0
    vertical, horizontal = spot.split()
    cx = x + {"left": -width / 2 - gap, "center": 0.0, "right": width / 2 + gap}[horizontal]
    cy = y + {"top": -height / 2 - gap, "middle": 0.0, "bottom": height / 2 + gap}[vertical]
    return (cx - width / 2 - 2, cy - height / 2 - 2, cx + width / 2 + 2, cy + height / 2 + 2)


def _label(x: float, y: float, text: str, spot: str, colour: str,
           gap: float = LABEL_GAP) -> dict[str, Any]:
    """A point's label as an annotation placed exactly where :func:`_label_box` expects it."""
    vertical, horizontal = spot.split()
    return {"x": x, "y": y, "text": text, "showarrow": False, "font": {"color": colour},
            "xanchor": {"left": "right", "center": "center", "right": "left"}[horizontal],
            "yanchor": {"top": "bottom", "middle": "middle", "bottom": "top"}[vertical],
            "xshift": {"left": -gap, "center": 0, "right": gap}[horizontal],
            "yshift": {"top": gap, "middle": 0, "bottom": -gap}[vertical]}


def _overlaps(box: Box, others: Sequence[Box]) -> bool:
    return any(not (box[2] <= o[0] or o[2] <= box[0] or box[3] <= o[1] or o[3] <= box[1])
               for o in others)


def _label_spots(points: Sequence[tuple[float, float]], texts: Sequence[str],
                 obstacles: list[Box], lines: Sequence[Box],
                 size: tuple[float, float],
                 gaps: Sequence[float] | None = None) -> list[str | None]:
    """Greedy label placement in pixels: for each point the first of eight spots around it
    whose box stays inside ``size`` and overlaps no earlier label, no marker (``obstacles``,
    which grows by each label placed) and, if possible, no line (x0, y0, x1, y1);
    ``None`` where no spot is free: that point gets no label. ``gaps``: each point's
    distance to its label (default :data:`LABEL_GAP`; more around a big marker)."""
    dots = []
    for x0, y0, x1, y1 in lines:  # a line as dots 2 px apart
        steps = max(2, int(math.dist((x0, y0), (x1, y1)) / 2))
        dots += [(x0 + (x1 - x0) * t / steps, y0 + (y1 - y0) * t / steps) for t in range(steps + 1)]
    spots: list[str | None] = []
    gaps = [LABEL_GAP] * len(points) if gaps is None else gaps
    for (x, y), text, gap in zip(points, texts, gaps, strict=True):
        candidates = [(spot, box) for spot in _SPOTS
                      for box in [_label_box(x, y, text, spot, gap)]
                      if box[0] >= 0 and box[1] >= 0 and box[2] <= size[0] and box[3] <= size[1]
                      and not _overlaps(box, obstacles)]
        chosen = next((c for c in candidates
                       if not any(c[1][0] < dx < c[1][2] and c[1][1] < dy < c[1][3]
                                  for dx, dy in dots)),
                      candidates[0] if candidates else None)
        spots.append(chosen[0] if chosen else None)
        if chosen:
            obstacles.append(chosen[1])
    return spots


def threshold_chart(sweeps: dict[str, list[dict[str, float]]] | list[dict[str, float]], k: int = 5,
                    chapter: tuple[float, float] | None = CHAPTER_CUT_OFF_POINT,
                    chapter_label: str = "reference chapter: bge cosine > 0.4",
                    chosen: float | None = None) -> Any:
    """Recall@k against context relevance@k, one point per cut-off (its value beside it).

    ``sweeps`` maps the name of the score each cut-off applies to (e.g. "cosine (e5)")
    to the rows of :func:`course_lib.lab.evaluation.cut_off_sweep`; a bare list of rows is one
    unnamed curve. Labels that would overlap are moved around their point, or left out
    (hover shows every point); points that coincide share one label ("0–0.1").
    ``chosen`` circles the first curve's point at that cut-off (the slider's choice): its
    label is placed first, and no other label covers the circle.

    >>> rows = [{"cut_off": c, "recall@5": r, "context_relevance@5": x}
    ...         for c, r, x in ((0.0, 0.9, 0.2), (0.1, 0.9, 0.2), (1.0, 0.7, 0.8))]
    >>> figure = threshold_chart(rows, chosen=0.1)  # 0 and 0.1 coincide: one label
    >>> [a.text for a in figure.layout.annotations], figure.data[1].name
    (['0–0.1', '1'], 'chosen: cut-off 0.1')
    """
    from plotly.colors import qualitative

    named = isinstance(sweeps, dict)  # a bare list of rows: one curve, no legend entry
    # An unnamed curve is the cut-off's trade-off on whatever score the rows came from.
    sweeps = sweeps if isinstance(sweeps, dict) else {"score cut-off": list(sweeps)}
    if chosen is not None and not any(r["cut_off"] == chosen for r in next(iter(sweeps.values()))):
        raise ValueError(f"chosen={chosen!r} is not one of the first curve's cut-offs "
                         f"{[r['cut_off'] for r in next(iter(sweeps.values()))]}")
    xkey, ykey = f"context_relevance@{k}", f"recall@{k}"
    xs = [r[xkey] for rows in sweeps.values() for r in rows] + ([chapter[0]] if chapter else [])
    ys = [r[ykey] for rows in sweeps.values() for r in rows] + ([chapter[1]] if chapter else [])
    width, height = 820, 540
    margin = {"l": 70, "r": 30, "t": 95, "b": 120}
    xrange = (min(0.0, min(xs)) - 0.03, max(1.0, max(xs)) + 0.03)
    low = min(ys) if min(ys) < 0.5 else _axis_start(min(ys))
    yrange = (low - 0.05 * (1 - low), 1 + 0.08 * (1 - low))
    plot = (width - margin["l"] - margin["r"], height - margin["t"] - margin["b"])

    def pixel(x: float, y: float) -> tuple[float, float]:
        return ((x - xrange[0]) / (xrange[1] - xrange[0]) * plot[0],
                (yrange[1] - y) / (yrange[1] - yrange[0]) * plot[1])

    figure = _figure(f"Score cut-off: recall@{k} against context relevance@{k}",
                     "one point per cut-off, its value beside it; a higher cut-off keeps fewer "
                     "paragraphs per question", xaxis_title=f"context relevance@{k}  "
                     "(share of the kept sentences that are the gold paragraph's)",
                     yaxis_title=f"recall@{k}", width=width, height=height, margin=margin,
                     legend={"orientation": "h", "x": 0, "xanchor": "left",
                             "y": -75 / plot[1], "yanchor": "top",
                             "title": {"text": "cut-off on: " if named else ""}})
    figure.update_xaxes(range=list(xrange), dtick=_step(xrange[1] - xrange[0], 8))
    figure.update_yaxes(range=list(yrange), dtick=_step(yrange[1] - yrange[0], 6))
    curves = []
    anchor_of: dict[int, dict[str, float]] = {}  # each row -> the first row of its label group
    for name, rows in sweeps.items():  # points that coincide on screen share one label
        groups: list[list[dict[str, float]]] = []
        for row in rows:
            if groups and math.dist(pixel(row[xkey], row[ykey]),
                                    pixel(groups[-1][-1][xkey], groups[-1][-1][ykey])) < 4:
                groups[-1].append(row)
            else:
                groups.append([row])
        texts = [f"{g[0]['cut_off']:g}" + (f"–{g[-1]['cut_off']:g}" if len(g) > 1 else "")
                 for g in groups]
        anchor_of.update({id(row): g[0] for g in groups for row in g})
        curves.append((name, rows, [g[0] for g in groups], texts))
    points = {id(row): pixel(row[xkey], row[ykey])
              for _, _, anchors, _ in curves for row in anchors}
    markers = [(x - 2, y - 2, x + 2, y + 2) for x, y in points.values()]
    if chapter is not None:
        cx, cy = pixel(*chapter)
        markers.append((cx - 9, cy - 9, cx + 9, cy + 9))
    picked = None  # the chosen row, and the label group (anchor) it belongs to
    if chosen is not None:
        row = next(r for r in curves[0][1] if r["cut_off"] == chosen)
        picked = (row, anchor_of[id(row)])
        px, py = pixel(row[xkey], row[ykey])
        markers.append((px - 12, py - 12, px + 12, py + 12))  # the open circle, 20 px wide
    lines = [(*points[id(a)], *points[id(b)]) for _, _, anchors, _ in curves
             for a, b in zip(anchors, anchors[1:], strict=False)]
    for i, (name, rows, anchors, texts) in enumerate(curves):
        order = list(range(len(anchors)))
        if i == 0 and picked is not None:  # the chosen point's label first: it always gets one
            first = next(j for j, a in enumerate(anchors) if a is picked[1])
            order = [first] + [j for j in order if j != first]
        gaps = [CHOSEN_GAP if picked is not None and anchors[j] is picked[1] else LABEL_GAP
                for j in order]
        placed = _label_spots([points[id(anchors[j])] for j in order], [texts[j] for j in order],
                              markers, lines, plot, gaps)
        spots = [placed[order.index(j)] for j in range(len(anchors))]
        gap_of = {j: gaps[n] for n, j in enumerate(order)}
        colour = qualitative.Plotly[i % len(qualitative.Plotly)]
        figure.add_scatter(x=[r[xkey] for r in rows], y=[r[ykey] for r in rows],
                           mode="lines+markers", name=_clean(name), line={"color": colour},
                           showlegend=named, customdata=[r["cut_off"] for r in rows],
                           hovertemplate=f"cut-off %{{customdata:g}}<br>{xkey} %{{x:.3f}}<br>"
                                         f"{ykey} %{{y:.3f}}<extra>{_clean(name)}</extra>")
        for j, (anchor, text, spot) in enumerate(zip(anchors, texts, spots, strict=True)):
            if spot:
                figure.add_annotation(_label(anchor[xkey], anchor[ykey], text, spot, colour,
                                             gap_of[j]))
    if picked is not None:
        row = picked[0]
        figure.add_scatter(x=[row[xkey]], y=[row[ykey]], mode="markers",
                           name=f"chosen: cut-off {chosen:g}",
                           hovertemplate=f"chosen: cut-off {chosen:g}<extra></extra>",
                           marker={"size": 20, "color": "red", "symbol": "circle-open",
                                   "line": {"width": 2}})
    if chapter is not None:
        figure.add_scatter(x=[chapter[0]], y=[chapter[1]], mode="markers",
                           name=_clean(chapter_label),
                           marker={"symbol": "star", "size": 16, "color": "black"})
    return figure


def score_histograms(panels: dict[str, dict[str, Sequence[float]]],
                     lines: dict[str, dict[str, float]] | None = None, bin_size: float = 0.01,
                     x_range: tuple[float, float] = (0.0, 1.0),
                     title: str = "Scores of the gold paragraph and of the other paragraphs",
                     panel: str = "model") -> Any:
    """Overlaid histograms of scores: one panel (row) per model, all on one x axis, so
    that where each model puts its scores can be compared at a glance. ``panel`` names
    what a panel is in the subtitle ("model", or "signal", "detector", ...).

    ``panels`` maps a model (e.g. "cosine (e5)") to groups of scores, e.g. the "gold
    paragraph" and "other paragraphs" of :func:`course_lib.lab.evaluation.scores_by_hit`.
    Each group is drawn as the share of *its own* scores per bin (percent), so a group of
    1,000 and one of 4,000 compare (their sizes are in the panel's title); the first group
    of each panel is highlighted.
    ``lines`` marks values on a panel, e.g. cut-offs: ``{model: {label: value}}``.

    >>> figure = score_histograms({"m": {"gold": [0.9, 0.92], "other": [0.85]}},
    ...                           lines={"m": {"cut-off 0.88": 0.88}})
    >>> [trace.name for trace in figure.data], figure.layout.annotations[-1].text
    (['gold', 'other'], 'cut-off 0.88')
    """
    from plotly.subplots import make_subplots

    if not panels:
        raise ValueError("panels is empty: give at least one model's scores")
    lines = lines or {}
    colours = (HIGHLIGHT, PLAIN, MUTED)
    names = list(panels)
    titles = [_clean(f"{name}: " + ", ".join(f"{group} {len(scores):,}" for group, scores
                                           in panels[name].items())) for name in names]
    figure = make_subplots(rows=len(names), cols=1, shared_xaxes=True, vertical_spacing=0.1,
                           subplot_titles=titles)
    figure.update_layout(template="plotly_white", width=820, height=140 + 210 * len(names),
                         barmode="overlay", bargap=0.05,
                         title={"text": _clean(title), "subtitle": {"text": _clean(
                             f"one panel per {panel}, same x axis; each colour: the share of its "
                             f"own scores in each {bin_size:g}-wide bin")}},
                         margin={"l": 70, "r": 30, "t": 110, "b": 100},
                         legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.12,
                                 "yanchor": "top"})
    shown: set[str] = set()  # one legend entry per group name
    for row, name in enumerate(names, start=1):
        for i, (group, scores) in enumerate(panels[name].items()):
            colour = colours[i % len(colours)]
            figure.add_histogram(x=list(scores), histnorm="percent", name=_clean(group),
                                 showlegend=group not in shown, legendgroup=group,
                                 xbins={"start": x_range[0], "end": x_range[1], "size": bin_size},
                                 marker={"color": colour}, opacity=0.65,
                                 hovertemplate=f"{_clean(group)}: %{{y:.1f}}% of its scores "
                                               "in %{x}<extra>" + _clean(name) + "</extra>",
                                 row=row, col=1)
            shown.add(group)
        figure.update_yaxes(title_text="% of the group", row=row, col=1)
        for j, (label, value) in enumerate(lines.get(name, {}).items()):
            figure.add_vline(x=value, line={"dash": "dash", "color": "black", "width": 1.2},
                             row=row, col=1)
            axis = "y" if row == 1 else f"y{row}"
            figure.add_annotation(x=value, y=1 - 0.14 * j, xref="x" if row == 1 else f"x{row}",
                                  yref=f"{axis} domain", text=_clean(label), showarrow=False,
                                  xanchor="left", xshift=4, yanchor="top",
                                  bgcolor="rgba(255,255,255,0.8)")
    figure.update_xaxes(range=list(x_range), dtick=_step(x_range[1] - x_range[0], 10))
    figure.update_xaxes(title_text="score", row=len(names), col=1)
    return figure


def rank_shift_chart(before: Sequence[int | None], after: Sequence[int | None],
                     worst: int = 21, limit: int | None = None) -> Any:
    """Slope chart: the gold paragraph's rank before → after reranking, for the questions
    whose rank changed (``None`` = not retrieved, counted as rank ``worst``). Questions that
    moved the same way share one line, thicker the more of them there are; the rank axis
    is logarithmic, so that 1, 2 and 3 stay apart; ``limit`` keeps only the first so many
    changed questions."""
    from collections import Counter

    changed = [(b or worst, a or worst) for b, a in zip(before, after, strict=True)
               if (b or worst) != (a or worst)][:limit]
    moves = Counter(changed)
    up, down = sum(a < b for b, a in changed), sum(a > b for b, a in changed)
    figure = _figure("Rank of the gold paragraph, before → after reranking",
                     f"{len(changed)} of {len(before)} questions changed rank: {up} up, "
                     f"{down} down; a thicker line is more questions",
                     yaxis_title="rank (1 = first)", width=640, height=580,
                     margin={"b": 80}, legend={"orientation": "h", "x": 0.5, "xanchor": "center",
                                               "y": -0.08, "yanchor": "top"})
    missing = worst * 1.6  # where "not found" is drawn: clear of the last real rank

    def drawn(rank: int) -> float:
        return missing if rank == worst else rank

    legend_done = set()
    for (b, a), count in sorted(moves.items(), key=lambda item: item[1]):
        better = a < b
        label = f"moved up ({up})" if better else f"moved down ({down})"
        figure.add_scatter(x=["before", "after"], y=[drawn(b), drawn(a)], mode="lines+markers",
                           line={"color": "seagreen" if better else "firebrick",
                                 "width": min(1.5 + (count - 1), 9)},
                           opacity=0.7, name=label, legendgroup=label,
                           showlegend=label not in legend_done,
                           hovertemplate=f"{count} question(s): rank {b} → {a}<extra></extra>")
        legend_done.add(label)
    ticks = [t for t in (1, 2, 3, 5, 10, 20, 50, 100) if t < worst]
    figure.update_yaxes(type="log", range=[math.log10(missing * 1.25), math.log10(0.8)],
                        tickvals=[*ticks, missing],
                        ticktext=[str(t) for t in ticks] + ["not found"])
    figure.update_xaxes(range=[-0.15, 1.15])
    return figure


def tree_chart(doc: Any, groups: Sequence[str] | None = None) -> Any:
    """The node-group tree: one box per group (its node count and mean length), each
    joined to its parent group."""
    groups = list(groups or doc.groups())
    depth: dict[str, int] = {}
    for group in groups:
        parent = doc.parent_of(group)
        depth[group] = 0 if parent is None else depth.get(parent, 0) + 1
    rows: dict[int, list[str]] = {}
    for group in groups:
        rows.setdefault(depth[group], []).append(group)
    position = {g: (depth[g], -i + (len(rows[depth[g]]) - 1) / 2)
                for d in rows for i, g in enumerate(rows[d])}
    tallest = max(len(r) for r in rows.values())
    figure = _figure("Node groups: a tree through each group's parent",
                     "box: group name, number of nodes, mean length in characters",
                     width=820, height=150 + 75 * tallest, showlegend=False,
                     margin={"l": 20, "r": 20, "b": 20})
    for group in groups:
        parent = doc.parent_of(group)
        if parent in position:
            (x0, y0), (x1, y1) = position[parent], position[group]
            figure.add_scatter(x=[x0, (x0 + x1) / 2, (x0 + x1) / 2, x1], y=[y0, y0, y1, y1],
                               mode="lines", line={"color": "darkgray", "width": 1.5},
                               hoverinfo="skip")
    labels = []
    for group in groups:
        nodes = doc.get_nodes(group)
        mean = sum(len(n.text) for n in nodes) / max(len(nodes), 1)
        labels.append(f"<b>{group}</b><br>{len(nodes):,} nodes · {mean:,.0f} chars")
    for group, label in zip(groups, labels, strict=True):
        figure.add_annotation(x=position[group][0], y=position[group][1], text=label,
                              showarrow=False, align="center", bgcolor="#EEF3FA",
                              bordercolor="steelblue", borderwidth=1.5, borderpad=5)
    figure.add_scatter(x=[position[g][0] for g in groups], y=[position[g][1] for g in groups],
                       mode="markers", marker={"size": 1, "opacity": 0}, hovertext=labels,
                       hoverinfo="text", name="groups")
    figure.update_xaxes(visible=False, range=[-0.5, max(depth.values()) + 0.5])
    figure.update_yaxes(visible=False, range=[-(tallest - 1) / 2 - 0.6, (tallest - 1) / 2 + 0.6])
    return figure


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """Project rows onto their first two principal components (centred SVD)."""
    centred = vectors - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    return centred @ components[:2].T


GOLD, RETRIEVED, OTHER = "gold paragraph", "retrieved", "other"
ROLE_COLOURS = {OTHER: MUTED, RETRIEVED: PLAIN, GOLD: HIGHLIGHT}


def paragraph_roles(count: int, gold: int | Sequence[int] = (),
                    retrieved: Sequence[int] = ()) -> list[str]:
    """Each paragraph's role for :func:`embedding_map`: the gold paragraph (also when it was
    retrieved), a retrieved one, or another.

    >>> paragraph_roles(4, gold=2, retrieved=[2, 0])
    ['retrieved', 'other', 'gold paragraph', 'other']
    """
    golds = {gold} if isinstance(gold, int | np.integer) else set(gold)
    chosen = {int(i) for i in retrieved}
    return [GOLD if i in golds else RETRIEVED if i in chosen else OTHER for i in range(count)]


def embedding_map(vectors: np.ndarray, labels: Sequence[str], query: np.ndarray | None = None,
                  neighbours: Sequence[int] = ()) -> Any:
    """Paragraph embeddings in 2-D (PCA) with a question (star) and its nearest paragraphs
    (circled, with their rank).

    ``labels`` colour the points: pass the roles of :func:`paragraph_roles` ("gold
    paragraph", "retrieved", "other") — what a learner wants to see is where the right
    answer lies and what was retrieved; any other labels get one colour each.
    """
    from plotly.colors import qualitative

    points = pca_2d(np.vstack([vectors, query[None, :]]) if query is not None else vectors)
    paragraphs = points[: len(labels)]
    roles = set(labels) <= set(ROLE_COLOURS)
    subtitle = (f"the question (star), its gold paragraph and the top {len(neighbours)} "
                "retrieved (circled, with rank)" if roles else "colour: label")
    figure = _figure("Paragraph embeddings, projected to 2-D with PCA",
                     subtitle + "; distances in 2-D are only suggestive",
                     xaxis_title="first principal component",
                     yaxis_title="second principal component", width=820, height=580)
    order = [r for r in ROLE_COLOURS if r in labels] if roles else list(dict.fromkeys(labels))
    for i, label in enumerate(order):
        mask = np.array([lab == label for lab in labels])
        colour = ROLE_COLOURS[label] if roles else qualitative.Plotly[i % len(qualitative.Plotly)]
        size = 7 if label == OTHER else 11
        figure.add_scatter(x=paragraphs[mask, 0], y=paragraphs[mask, 1], mode="markers",
                           name=f"{_clean(label)} ({mask.sum()})",
                           marker={"size": size, "color": colour, "opacity": 0.85,
                                   "line": {"width": 0.5, "color": "white"}})
    if len(neighbours):
        chosen = paragraphs[list(neighbours)]
        figure.add_scatter(x=chosen[:, 0], y=chosen[:, 1], mode="markers+text",
                           name=f"top {len(neighbours)} (rank)",
                           text=[str(r) for r in range(1, len(neighbours) + 1)],
                           textposition="top right", textfont={"size": 12},
                           marker={"size": 19, "color": "rgba(0,0,0,0)",
                                   "line": {"width": 2, "color": "black"}})
    if query is not None:
        figure.add_scatter(x=[points[-1, 0]], y=[points[-1, 1]], mode="markers", name="question",
                           marker={"symbol": "star", "size": 18, "color": "black"})
    return figure


def path_overlap_chart(found: Sequence[Sequence[str]], total: int,
                       title: str = "Which retrieval paths found the gold paragraph") -> Any:
    """Which combination of paths found the gold paragraph (one bar per combination);
    ``found`` holds, per question, the names of the paths that found it."""
    from collections import Counter

    combos = Counter(" + ".join(sorted(paths)) if paths else "no path" for paths in found)
    order = sorted(combos, key=lambda c: (-combos[c], c))
    shares = [combos[c] / total for c in order]
    figure = _figure(title, f"one bar per combination of paths; share of {total} questions",
                     width=820, height=170 + 38 * len(order),
                     xaxis_title=f"share of {total} questions", margin={"l": 20, "r": 30})
    figure.add_bar(x=shares, y=order, orientation="h", text=[f"{s:.1%}" for s in shares],
                   textposition="outside", cliponaxis=False, marker={"color": PLAIN},
                   hovertemplate="%{y}: %{x:.1%}<extra></extra>")
    figure.update_xaxes(range=[0, max(shares) * 1.15], tickformat=".0%")
    figure.update_yaxes(autorange="reversed", automargin=True)
    return figure
