"""The course's widgets (ipywidgets) and the static views they show.

``chat_panel(rag)`` gives a question box, the answer, and an expandable list of the
retrieved context with scores and the path(s) that found each piece; ``query_explorer(kb)``
ranks any question with a pipeline of your choice and marks the gold paragraph;
``threshold_slider(rows)`` walks a cut-off sweep. Outside a live notebook (e.g. under
nbval, or a notebook nobody has run or trusted) a widget cannot run: its output then reads
as a sentence saying what it is, and ``format_answer`` / ``explore`` give the same content
as plain text / HTML.

Each widget carries CSS classes ``course-*`` (e.g. ``course-query-explorer``,
``course-chat-ask``), and a running computation shows "working…" in an element of class
``course-working``: tests find them there.

>>> from course_lib.llm import OfflineLLM
>>> from course_lib.rag import MultiPathRAG
>>> rag = MultiPathRAG({"all": lambda q: [DocNode("长城东起山海关。", uid="a").with_score(2.0)]},
...                    llm=OfflineLLM())
>>> print(format_answer(rag.ask("长城东起哪里？")))
Q: 长城东起哪里？
A: 长城东起山海关。   [offline stand-in]
context:
  1. a  score 2.000  via all#1  长城东起山海关。
"""

from __future__ import annotations

import html
import re
from typing import Any

from ..._support.validation import check_number, validate_query, validate_topk
from ...node import DocNode
from ...rag import MultiPathRAG, RAGAnswer
from ...ranking import passes

BACKEND_LABELS = {"offline": "offline stand-in", "openai": "LLM"}


def _via(node: DocNode) -> str:
    return ", ".join(f"{path}#{rank}" for path, rank in node.found_by.items()) or "-"


def format_answer(result: RAGAnswer, preview: int = 60) -> str:
    """The answer and its context as plain text; a declined question shows why (the
    answerability verdict) and the context that was looked at."""
    label = _label(result)
    lines = [f"Q: {result.question}", f"A: {result.answer}   [{label}]"]
    if len(result.queries) > 1:
        lines.append("rewrites: " + " | ".join(result.queries[1:]))
    explain = getattr(result.verdict, "explain", None)
    if callable(explain):
        lines.append("answerability: " + explain())
    lines.append("context looked at:" if result.declined else "context:")
    for i, node in enumerate(result.contexts, start=1):
        text = node.get_content().replace("\n", " ")
        text = text if len(text) <= preview else text[:preview] + "…"
        score = "" if node.score is None else f"score {node.score:.3f}"
        lines.append(f"  {i}. {node.uid}  {score}  via {_via(node)}  {text}")
    return "\n".join(lines)


def _label(result: RAGAnswer) -> str:
    if result.declined:
        return "declined by the answerability check"
    return BACKEND_LABELS.get(result.backend, result.backend)


def answer_html(result: RAGAnswer, gold: str | None = None) -> str:
    """The answer as HTML: retrieved context in a collapsible block, gold text highlighted;
    a declined question also shows the answerability verdict (why it was declined)."""
    label = _label(result)
    rows = []
    for i, node in enumerate(result.contexts, start=1):
        style = " style='background:#e6ffe6'" if gold and node.text == gold else ""
        score = "" if node.score is None else f"{node.score:.3f}"
        rows.append(f"<tr{style}><td>{i}</td><td>{html.escape(score)}</td>"
                    f"<td>{html.escape(_via(node))}</td>"
                    f"<td>{html.escape(node.get_content())}</td></tr>")
    explain = getattr(result.verdict, "explain", None)
    why = (f"<details{' open' if result.declined else ''}><summary>answerability</summary>"
           f"<pre>{html.escape(explain())}</pre></details>" if callable(explain) else "")
    return (f"<p><b>A:</b> {html.escape(str(result.answer))} <i>[{html.escape(label)}]</i> "
            f"({result.seconds:.2f} s)</p>{why}<details><summary>"
            f"{'context looked at' if result.declined else 'retrieved context'} "
            f"({len(result.contexts)})</summary><table><tr><th>#</th><th>score</th>"
            f"<th>found by</th><th>text</th></tr>{''.join(rows)}</table></details>")


def _status(text: str, kind: str, **data: object) -> str:
    """A status line the browser test can find: ``course-status course-<kind>``
    (``course-working`` while something runs), with optional ``data-*`` attributes."""
    attributes = "".join(f" data-{key}='{html.escape(str(value))}'" for key, value in data.items())
    return (f"<p class='course-status course-{kind}'{attributes}>"
            f"{html.escape(text)}</p>")


_PANEL_CLASS: list[type] = []


def _panel(children: list[Any], css: str, fallback: Any) -> Any:
    """A VBox whose plain-text form is ``fallback()`` (a sentence), not the widget's repr.

    JupyterLab does not draw widgets from an untrusted notebook (a fresh clone) and shows
    the text part of the output instead; GitHub does the same. ``css`` is a class on the
    panel's element, for tests and styling."""
    import ipywidgets as widgets

    if not _PANEL_CLASS:
        class Panel(widgets.VBox):
            """A VBox with a readable text/plain fallback."""

            fallback: Any = None

            def _repr_mimebundle_(self, **kwargs: Any) -> Any:
                bundle = super()._repr_mimebundle_(**kwargs)
                if bundle is not None and self.fallback is not None:
                    bundle["text/plain"] = self.fallback()
                return bundle

        _PANEL_CLASS.append(Panel)
    panel = _PANEL_CLASS[0](children)
    panel.fallback = fallback
    panel.add_class(css)
    return panel


def chat_panel(rag: MultiPathRAG, placeholder: str = "输入问题，例如：长城东起哪里？") -> Any:
    """An ipywidgets panel: type a question, press Enter or click 'Ask', read the answer.

    Each question is asked once: pressing Enter or leaving the box submits it, and the
    click on 'Ask' that follows (clicking the button is what left the box) does not ask it
    again; a second click on 'Ask' does. While ``rag.ask`` runs, the panel shows
    "working…" (class ``course-working``) and its controls are disabled; then the answer,
    under a line "questions asked in this panel: N" (class ``course-done``, attribute
    ``data-asks``).
    """
    import ipywidgets as widgets

    # continuous_update=False: the value changes (and we answer) on Enter or when the box
    # loses focus, not per keystroke.
    box = widgets.Text(placeholder=placeholder, continuous_update=False,
                       layout=widgets.Layout(width="70%"))
    button = widgets.Button(description="Ask", button_style="primary")
    box.add_class("course-chat-question")
    button.add_class("course-chat-ask")
    output = widgets.HTML()
    output.add_class("course-chat-output")
    state: dict[str, Any] = {"asked": None, "click_absorbed": True, "asks": 0}

    def ask(question: str) -> None:
        state["asked"], state["asks"] = question, state["asks"] + 1
        box.disabled = button.disabled = True
        output.value = _status(f"working… asking: {question}", "working")
        try:
            body = answer_html(rag.ask(question))
        except Exception as error:  # show, don't crash the panel
            body = f"<b>error:</b> {html.escape(str(error))}"
        finally:
            box.disabled = button.disabled = False
        output.value = _status(f"questions asked in this panel: {state['asks']}", "done",
                               asks=state["asks"]) + body

    def submitted(change: Any) -> None:  # Enter, or the box lost focus
        question = str(change["new"] if isinstance(change, dict) else box.value).strip()
        if not question:
            output.value = _status("Type a question first.", "idle")
            return
        if question != state["asked"]:
            state["click_absorbed"] = False
            ask(question)

    def clicked(_: Any) -> None:
        question = box.value.strip()
        if not question:
            output.value = _status("Type a question first.", "idle")
            return
        if question == state["asked"] and not state["click_absorbed"]:
            # This click is what made the box submit (by taking its focus): the question
            # has just been asked. A further click asks it again.
            state["click_absorbed"] = True
            return
        state["click_absorbed"] = True
        ask(question)

    button.on_click(clicked)
    box.observe(submitted, names="value")

    def fallback() -> str:
        return ("An interactive chat panel (ipywidgets): it needs a running kernel, so run "
                "the cell in Jupyter, type a question and press Enter or click 'Ask'.")

    return _panel([widgets.HBox([box, button]), output], "course-chat-panel", fallback)


GOLD_STYLE = "background-color:#e6ffe6"  # the gold row, also when a page has no stylesheet
_OVERLAP = 10  # characters a chunk must share with the gold paragraph's edge to count


def gold_relation(node: DocNode | str, gold: str) -> str | None:
    """How a retrieved node stands to the gold paragraph, or ``None`` when it holds none
    of it: ``"gold paragraph"`` (it is the paragraph), ``"inside the gold paragraph"``
    (a chunk or sentence cut from it: its text lies within the paragraph, or one of its
    parents is the paragraph), ``"holds the gold paragraph"`` (a larger chunk containing
    it whole), or ``"part of the gold paragraph"`` (a chunk across a paragraph boundary:
    its first line ends the paragraph, or its last line begins it, over at least 10
    characters).

    >>> gold = "长城是古代中国修建的军事工程。东起山海关，西至嘉峪关。"
    >>> gold_relation(gold, gold), gold_relation("东起山海关，西至嘉峪关。", gold)
    ('gold paragraph', 'inside the gold paragraph')
    >>> gold_relation("上一段。\\n" + gold + "\\n下一段", gold)
    'holds the gold paragraph'
    >>> gold_relation("上一段的结尾。\\n长城是古代中国修建的军事工程。", gold)
    'part of the gold paragraph'
    >>> gold_relation("泰山在山东。", gold) is None
    True
    """
    text = node.text if isinstance(node, DocNode) else node
    if not gold or not text:
        return None
    if text == gold:
        return "gold paragraph"
    parent = node.parent if isinstance(node, DocNode) else None
    while parent is not None:  # a node cut from the paragraph node (e.g. its sentences)
        if parent.text == gold:
            return "inside the gold paragraph"
        parent = parent.parent
    if text in gold:
        return "inside the gold paragraph"
    if gold in text:
        return "holds the gold paragraph"
    lines = text.split("\n")
    if len(lines) > 1 and ((len(lines[0]) >= _OVERLAP and gold.endswith(lines[0]))
                           or (len(lines[-1]) >= _OVERLAP and gold.startswith(lines[-1]))):
        return "part of the gold paragraph"
    return None


def explore(kb: Any, question: str, pipeline: str = "bm25-paragraph", group: str = "paragraph",
            similarity: str = "bm25_chinese", topk: int = 5, cut_off: float | None = None,
            cache: dict[str, Any] | None = None) -> str:
    """Ranked nodes for one question as HTML; if the question is one of ``kb``'s, every
    node that is, lies inside, holds or shares part of its gold paragraph is marked and
    highlighted (:func:`gold_relation`). ``pipeline="custom"`` uses ``group``/``similarity``
    /``topk``. A line above the table (class ``course-explorer-summary``) says what was
    run and where the gold paragraph is; no results give a sentence saying why
    (class ``course-explorer-empty``), not an empty table."""
    from ...retriever import Retriever
    from ..data.kb_document import knowledge_base_document
    from ..systems.pipelines import build_pipeline

    validate_query(question)
    topk = validate_topk(topk)
    cut_off = None if cut_off is None else check_number(cut_off, "cut_off")
    cache = {} if cache is None else cache  # at most one entry per pipeline name
    if pipeline == "custom":
        if "doc" not in cache:
            cache["doc"] = knowledge_base_document(kb, embed=True)
        nodes = Retriever(cache["doc"], group, similarity, topk=topk,
                          similarity_cut_off=cut_off)(question)
        uncut = len(nodes) if cut_off is None else None
        what = f"custom: {group}, {similarity}"
    else:
        if pipeline not in cache:
            cache[pipeline] = build_pipeline(pipeline, kb).retrieve
        ranked = cache[pipeline](question)[:topk]
        nodes = [n for n in ranked if passes(n.score, cut_off)]
        uncut = len(ranked)
        what = pipeline
    setting = (f"{what} · top k {topk} · "
               + ("no cut-off" if cut_off is None else f"cut-off {cut_off:g}"))
    if not nodes:
        why = (f"every one of the {uncut} retrieved scored at or below the cut-off {cut_off:g}"
               if cut_off is not None and uncut else
               f"nothing scored above the cut-off {cut_off:g}" if cut_off is not None else
               "the retriever returned nothing for this question")
        return (f"<p class='course-explorer-empty'><b>No results</b> ({html.escape(setting)}): "
                f"{html.escape(why)}."
                + (" Lower the cut-off or untick “apply cut-off”." if cut_off is not None
                   else "") + "</p>")
    gold = next((q.paragraph for q in kb.questions if q.question == question), None)
    rows, found = [], []
    for rank, node in enumerate(nodes, start=1):
        relation = None if gold is None else gold_relation(node, gold)
        if relation:
            found.append(f"rank {rank}" + ("" if relation == "gold paragraph" else
                                           f" ({relation})"))
        marked = f" class='course-gold' style='{GOLD_STYLE}'" if relation else ""
        score = "" if node.score is None else f"{node.score:.3f}"
        rows.append(f"<tr{marked}><td>{rank}</td><td>{score}</td><td>{html.escape(node.uid)}</td>"
                    f"<td>{html.escape(relation or '')}</td>"
                    f"<td>{html.escape(node.text[:160])}</td></tr>")
    fewer = (f" (the pipeline returns {len(nodes)})" if pipeline != "custom" and cut_off is None
             and len(nodes) < topk else "")
    if gold is None:
        verdict = " — not one of the knowledge base's questions: no gold paragraph to mark"
    elif found:
        verdict = " — gold paragraph found: " + ", ".join(found)
    else:
        verdict = " — gold paragraph <b>not</b> in the results"
    return (f"<p class='course-explorer-summary'>{len(nodes)} results{fewer} · "
            f"{html.escape(setting)}{verdict}</p><table class='course-explorer-table'>"
            f"<tr><th>#</th><th>score</th><th>node</th><th>gold?</th><th>text</th></tr>"
            f"{''.join(rows)}</table>")


def query_explorer(kb: Any, pipelines: tuple[str, ...] = (
        "bm25-paragraph", "bm25-char-paragraph", "cosine-paragraph", "multipath-rerank",
        "custom")) -> Any:
    """A widget: type (or pick) a question, choose pipeline / group / similarity / top-k /
    cut-off, see the ranked nodes with scores and the gold paragraph highlighted.

    ``kb`` must hold questions (``kb.questions``, as from :func:`load_cmrc2018_kb`): the
    explorer starts on the first and offers the first 200. For a knowledge base without
    any, call :func:`explore` with your own question.

    Retrieval runs when a setting changes, when the question box is submitted (Enter, or
    leaving it) or on 'Search' — never per keystroke, and never twice for the same
    settings. While it runs (building a pipeline's index the first time can take a
    while) the results are replaced by "working…" (class ``course-working``) and the
    controls are disabled, so what is on screen always belongs to the settings shown.
    """
    questions = getattr(kb, "questions", None)
    if not questions:
        raise ValueError("query_explorer needs a knowledge base with questions "
                         f"(kb.questions is {'missing' if questions is None else 'empty'}): "
                         "load one with questions (e.g. load_cmrc2018_kb()), or call "
                         "explore(kb, 'your question') instead")
    import ipywidgets as widgets

    from ...similarity import SIMILARITIES

    cache: dict[str, Any] = {}  # one entry per pipeline name: bounded
    question = widgets.Combobox(value=kb.questions[0].question, ensure_option=False,
                                options=[q.question for q in kb.questions[:200]],
                                description="question", continuous_update=False,
                                layout=widgets.Layout(width="80%"))
    search = widgets.Button(description="Search", button_style="primary")
    pipeline = widgets.Dropdown(options=list(pipelines), description="pipeline")
    group = widgets.Dropdown(options=["paragraph", "CoarseChunk", "MediumChunk", "FineChunk"],
                             description="group")
    similarity = widgets.Dropdown(options=sorted(SIMILARITIES), value="bm25_chinese",
                                  description="similarity")
    topk = widgets.IntSlider(value=5, min=1, max=20, description="top k",
                             continuous_update=False)
    cut_off = widgets.FloatText(value=0.0, description="cut-off", continuous_update=False)
    use_cut = widgets.Checkbox(value=False, description="apply cut-off")
    output = widgets.HTML()
    for control, css in ((question, "question"), (search, "search"), (pipeline, "pipeline"),
                         (group, "group"), (similarity, "similarity"), (topk, "topk"),
                         (cut_off, "cut-off"), (use_cut, "apply-cut-off"), (output, "output")):
        control.add_class(f"course-explorer-{css}")  # for tests and styling
    controls = (question, search, pipeline, group, similarity, topk, cut_off, use_cut)
    shown: dict[str, Any] = {"settings": None, "summary": ""}

    def settings() -> tuple[Any, ...]:
        custom = pipeline.value == "custom"
        return (question.value.strip(), pipeline.value,
                group.value if custom else None, similarity.value if custom else None,
                topk.value, cut_off.value if use_cut.value else None)

    def update(_: Any = None) -> None:
        now = settings()
        if now == shown["settings"]:  # on screen already (e.g. the click after Enter)
            return
        shown["settings"] = now
        for control in controls:
            control.disabled = True
        output.value = _status(f"working… {now[1]} for: {now[0]}", "working")
        try:
            result = explore(kb, now[0], now[1], group.value, similarity.value, now[4],
                             now[5], cache)
        except Exception as error:  # show, don't crash the widget
            shown["settings"] = None  # the same settings may be tried again
            result = f"<p class='course-explorer-error'><b>error:</b> {html.escape(str(error))}</p>"
        finally:
            for control in controls:
                control.disabled = control in (group, similarity) and now[1] != "custom"
        output.value = result
        shown["summary"] = re.sub(r"<[^>]+>", "", result.split("</p>")[0])

    for control in (question, pipeline, group, similarity, topk, cut_off, use_cut):
        control.observe(update, names="value")
    search.on_click(update)
    update()

    def fallback() -> str:
        return ("An interactive query explorer (ipywidgets): run the cell in Jupyter to use "
                f"it. When it was shown, for “{question.value}”: {shown['summary']}.")

    return _panel([widgets.HBox([question, search]), widgets.HBox([pipeline, group, similarity]),
                   widgets.HBox([topk, cut_off, use_cut]), output], "course-query-explorer",
                  fallback)


def threshold_slider(sweep_rows: list[dict[str, float]], k: int = 5,
                     name: str | None = None) -> Any:
    """A slider over a cut-off sweep: moving it (on release) updates the line of numbers
    under it (class ``course-slider-label``) and redraws the chart with the chosen point.
    ``name`` says what the cut-off is on (e.g. ``"cosine (e5)"``): the curve's name in
    the chart's legend."""
    if not isinstance(sweep_rows, (list, tuple)) or not sweep_rows:
        raise ValueError("sweep_rows must be a non-empty list of rows (dicts) from a cut-off "
                         f"sweep, got {sweep_rows!r:.60}")
    needed = ("cut_off", f"recall@{k}", f"context_relevance@{k}", "mean_kept")
    missing = [key for key in needed if not isinstance(sweep_rows[0], dict)
               or key not in sweep_rows[0]]
    if missing:
        have = sorted(sweep_rows[0]) if isinstance(sweep_rows[0], dict) else []
        raise ValueError(f"sweep_rows lack {missing} for k={k}: pass the k the sweep was run "
                         f"with (the rows have {have})")
    import ipywidgets as widgets

    from .plots import show, threshold_chart

    # The chart is redrawn on release, not at every step the handle passes.
    slider = widgets.SelectionSlider(options=[(f"{r['cut_off']:g}", r["cut_off"])
                                              for r in sweep_rows],
                                     description="cut-off", continuous_update=False)
    label = widgets.HTML()
    output = widgets.Output()
    slider.add_class("course-slider")
    label.add_class("course-slider-label")
    output.add_class("course-slider-chart")

    def line(row: dict[str, float]) -> str:
        return (f"cut-off {row['cut_off']:g}: recall@{k} {row[f'recall@{k}']:.3f}, "
                f"context relevance@{k} {row[f'context_relevance@{k}']:.3f}, "
                f"{row['mean_kept']:.2f} kept per question")

    def update(_: Any = None) -> None:
        row = next(r for r in sweep_rows if r["cut_off"] == slider.value)
        label.value = html.escape(line(row))
        figure = threshold_chart(sweep_rows if name is None else {name: sweep_rows}, k,
                                 chosen=row["cut_off"])
        output.clear_output(wait=True)
        with output:
            show(figure)

    slider.observe(update, names="value")
    update()

    def fallback() -> str:
        row = next(r for r in sweep_rows if r["cut_off"] == slider.value)
        return (f"An interactive cut-off slider (ipywidgets) over {len(sweep_rows)} cut-offs, "
                f"{sweep_rows[0]['cut_off']:g} to {sweep_rows[-1]['cut_off']:g}: run the cell "
                f"in Jupyter to move it. When it was shown: {line(row)}.")

    return _panel([slider, label, output], "course-threshold-slider", fallback)
