"""The course's pictures (plotly), and a way to show them that GitHub can render too.

:func:`show` draws a figure as a static SVG when plotly's exporter (kaleido, which
drives a local Chrome/Chromium) is available — so the committed notebooks display it —
and falls back to the interactive figure otherwise.

Every chart function takes plain numbers (results of :func:`course_lib.evaluate`,
sweeps, ranks) and returns a ``plotly.graph_objects.Figure``. They are drawn to be read
as static pictures: values printed on the bars, room left for every label, point labels
that never overlap, at most eight pipelines at once, titles that say what is compared.
"""

from __future__ import annotations

import atexit
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

CHAPTER_CUT_OFF_POINT = (0.87, 0.88)  # (context relevance@5, recall@5) with bge cosine > 0.4


def show(figure: Any, width: int | None = None, height: int | None = None) -> None:
    """Display ``figure`` as SVG (static, renders on GitHub) or, failing that, interactively."""
    from IPython.display import SVG, display

    try:
        if not _exporter_ready():
            raise RuntimeError("no static exporter")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # kaleido's notes about its server options
            svg = figure.to_image(format="svg", width=width, height=height)
    except Exception:  # no kaleido or no browser for it: the interactive figure still works
        figure.show(renderer="notebook_connected")
        return
    display(SVG(svg))


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


def record(result: dict[str, Any], label: str | None = None) -> None:
    """Add an evaluation result (recall@k, MRR@k) to this session's comparison chart.

    >>> clear_recorded(); record({"pipeline": "bm25", "recall@1": 0.9, "seconds": 2.0})
    >>> recorded()
    {'bm25': {'recall@1': 0.9}}
    """
    keep = {k: v for k, v in result.items() if k.startswith(("recall@", "mrr@"))}
    _RECORDED[label or result["pipeline"]] = keep


def recorded() -> dict[str, dict[str, float]]:
    """What :func:`record` collected in this Python process (a copy)."""
    return {name: dict(scores) for name, scores in _RECORDED.items()}


def clear_recorded() -> None:
    """Forget every recorded result."""
    _RECORDED.clear()


def comparison_chart(results: dict[str, dict[str, float]] | None = None,
                     ks: Sequence[int] = (1, 3, 5), limit: int = 8) -> Any:
    """One panel per metric (recall@k for each k, then MRR@max k), one bar per pipeline.

    Pipelines are sorted by recall@min k (ties: the next metrics, then the name); the best
    is highlighted; at most ``limit`` are drawn (the best ones, and the subtitle says so).
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
    notes = [f"sorted by {metrics[0]}; best: {shown[0]} (highlighted)"]
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
                       marker={"color": [HIGHLIGHT if n == shown[0] else PLAIN for n in names]},
                       hovertemplate="%{y}: %{x:.4f}<extra>" + metric + "</extra>",
                       row=1, col=column)
        figure.update_xaxes(range=[start, top], dtick=step, tick0=start,
                            tickformat=".2f" if step < 0.1 else ".1f", row=1, col=column)
    figure.update_yaxes(autorange="reversed", automargin=True, tickvals=shown,
                        ticktext=[f"<b>{_clean(n)}</b>" if i == 0 else _clean(n)
                                  for i, n in enumerate(shown)])
    return figure


# ---------------------------------------------------------------- single charts
_SPOTS = ("top center", "bottom center", "middle right", "middle left",
          "top right", "top left", "bottom right", "bottom left")


Box = tuple[float, float, float, float]  # left, top, right, bottom, in pixels (y down)


LABEL_GAP = 5  # pixels between a point and its label


def _label_box(x: float, y: float, text: str, spot: str) -> Box:
    """The box of :func:`_label` at ``spot`` ("top center", ...) around the point (x, y),
    with 2 px to spare on every side so that labels keep clear of each other and of lines."""
    width, height = FONT_PX * len(text) + 2, 16.0
    vertical, horizontal = spot.split()
    cx = x + {"left": -width / 2 - LABEL_GAP, "center": 0.0,
              "right": width / 2 + LABEL_GAP}[horizontal]
    cy = y + {"top": -height / 2 - LABEL_GAP, "middle": 0.0,
              "bottom": height / 2 + LABEL_GAP}[vertical]
    return (cx - width / 2 - 2, cy - height / 2 - 2, cx + width / 2 + 2, cy + height / 2 + 2)


def _label(x: float, y: float, text: str, spot: str, colour: str) -> dict[str, Any]:
    """A point's label as an annotation placed exactly where :func:`_label_box` expects it."""
    vertical, horizontal = spot.split()
    return {"x": x, "y": y, "text": text, "showarrow": False, "font": {"color": colour},
            "xanchor": {"left": "right", "center": "center", "right": "left"}[horizontal],
            "yanchor": {"top": "bottom", "middle": "middle", "bottom": "top"}[vertical],
            "xshift": {"left": -LABEL_GAP, "center": 0, "right": LABEL_GAP}[horizontal],
            "yshift": {"top": LABEL_GAP, "middle": 0, "bottom": -LABEL_GAP}[vertical]}


def _overlaps(box: Box, others: Sequence[Box]) -> bool:
    return any(not (box[2] <= o[0] or o[2] <= box[0] or box[3] <= o[1] or o[3] <= box[1])
               for o in others)


def _label_spots(points: Sequence[tuple[float, float]], texts: Sequence[str],
                 obstacles: list[Box], lines: Sequence[Box],
                 size: tuple[float, float]) -> list[str | None]:
    """Greedy label placement in pixels: for each point the first of eight spots around it
    whose box stays inside ``size`` and overlaps no earlier label, no marker (``obstacles``,
    which grows by each label placed) and, if possible, no line (x0, y0, x1, y1);
    ``None`` where no spot is free: that point gets no label."""
    dots = []
    for x0, y0, x1, y1 in lines:  # a line as dots 2 px apart
        steps = max(2, int(math.dist((x0, y0), (x1, y1)) / 2))
        dots += [(x0 + (x1 - x0) * t / steps, y0 + (y1 - y0) * t / steps) for t in range(steps + 1)]
    spots: list[str | None] = []
    for (x, y), text in zip(points, texts, strict=True):
        candidates = [(spot, box) for spot in _SPOTS
                      for box in [_label_box(x, y, text, spot)]
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
                    chapter_label: str = "reference chapter: bge cosine > 0.4") -> Any:
    """Recall@k against context relevance@k, one point per cut-off (its value beside it).

    ``sweeps`` maps the name of the score each cut-off applies to (e.g. "cosine (e5)")
    to the rows of :func:`course_lib.evaluation.cut_off_sweep`; a bare list of rows is one
    unnamed curve. Labels that would overlap are moved around their point, or left out
    (hover shows every point); points that coincide share one label ("0–0.1").
    """
    from plotly.colors import qualitative

    named = isinstance(sweeps, dict)  # a bare list of rows: one curve, no legend entry
    sweeps = sweeps if isinstance(sweeps, dict) else {"cut-off sweep": list(sweeps)}
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
                     "(share of the kept text that is the gold paragraph)",
                     yaxis_title=f"recall@{k}", width=width, height=height, margin=margin,
                     legend={"orientation": "h", "x": 0, "xanchor": "left",
                             "y": -75 / plot[1], "yanchor": "top",
                             "title": {"text": "cut-off on: " if named else ""}})
    figure.update_xaxes(range=list(xrange), dtick=_step(xrange[1] - xrange[0], 8))
    figure.update_yaxes(range=list(yrange), dtick=_step(yrange[1] - yrange[0], 6))
    curves = []
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
        curves.append((name, rows, [g[0] for g in groups], texts))
    points = {id(row): pixel(row[xkey], row[ykey])
              for _, _, anchors, _ in curves for row in anchors}
    markers = [(x - 2, y - 2, x + 2, y + 2) for x, y in points.values()]
    if chapter is not None:
        cx, cy = pixel(*chapter)
        markers.append((cx - 9, cy - 9, cx + 9, cy + 9))
    lines = [(*points[id(a)], *points[id(b)]) for _, _, anchors, _ in curves
             for a, b in zip(anchors, anchors[1:], strict=False)]
    for i, (name, rows, anchors, texts) in enumerate(curves):
        spots = _label_spots([points[id(a)] for a in anchors], texts, markers, lines, plot)
        colour = qualitative.Plotly[i % len(qualitative.Plotly)]
        figure.add_scatter(x=[r[xkey] for r in rows], y=[r[ykey] for r in rows],
                           mode="lines+markers", name=_clean(name), line={"color": colour},
                           showlegend=named, customdata=[r["cut_off"] for r in rows],
                           hovertemplate=f"cut-off %{{customdata:g}}<br>{xkey} %{{x:.3f}}<br>"
                                         f"{ykey} %{{y:.3f}}<extra>{_clean(name)}</extra>")
        for anchor, text, spot in zip(anchors, texts, spots, strict=True):
            if spot:
                figure.add_annotation(_label(anchor[xkey], anchor[ykey], text, spot, colour))
    if chapter is not None:
        figure.add_scatter(x=[chapter[0]], y=[chapter[1]], mode="markers",
                           name=_clean(chapter_label),
                           marker={"symbol": "star", "size": 16, "color": "black"})
    return figure


def score_histograms(panels: dict[str, dict[str, Sequence[float]]],
                     lines: dict[str, dict[str, float]] | None = None, bin_size: float = 0.01,
                     x_range: tuple[float, float] = (0.0, 1.0),
                     title: str = "Scores of the gold paragraph and of the other paragraphs"
                     ) -> Any:
    """Overlaid histograms of scores: one panel (row) per model, all on one x axis, so
    that where each model puts its scores can be compared at a glance.

    ``panels`` maps a model (e.g. "cosine (e5)") to groups of scores, e.g. the "gold
    paragraph" and "other paragraphs" of :func:`course_lib.evaluation.scores_by_hit`.
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
                             f"one panel per model, same x axis; each colour: the share of its "
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
