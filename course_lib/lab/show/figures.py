"""How the course's pictures are shown and laid out: :func:`show` (a PNG picture where
plotly's static exporter is available, else plotly's own interactive figure, either way with
a sentence naming the chart as its plain text), the PNG's compaction, the palette and layout
helpers, and the placement of point labels so that no two overlap. The charts themselves are
in :mod:`course_lib.lab.show.plots`, which also offers every name here.
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




# ---------------------------------------------------------------- point labels
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
    which grows by each label placed) and no line (x0, y0, x1, y1); ``None`` where no spot
    is free: that point gets no label (its hover text still names it) rather than one that
    covers a curve. ``gaps``: each point's distance to its label (default
    :data:`LABEL_GAP`; more around a big marker)."""
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
                                  for dx, dy in dots)), None)
        spots.append(chosen[0] if chosen else None)
        if chosen:
            obstacles.append(chosen[1])
    return spots
