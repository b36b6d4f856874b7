"""A small chat panel for a RAG system (ipywidgets), and the text view it shows.

``chat_panel(rag)`` gives a question box, the answer, and an expandable list of the
retrieved context with scores and the path(s) that found each piece. Outside a live
notebook (e.g. under nbval) the widget cannot run; ``format_answer`` prints the same
content as plain text.

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
from typing import Any

from .node import DocNode
from .rag import MultiPathRAG, RAGAnswer
from .ranking import passes
from .validation import check_number, validate_query, validate_topk

BACKEND_LABELS = {"offline": "offline stand-in", "openai": "LLM"}


def _via(node: DocNode) -> str:
    return ", ".join(f"{path}#{rank}" for path, rank in node.found_by.items()) or "-"


def format_answer(result: RAGAnswer, preview: int = 60) -> str:
    """The answer and its context as plain text."""
    label = BACKEND_LABELS.get(result.backend, result.backend)
    lines = [f"Q: {result.question}", f"A: {result.answer}   [{label}]"]
    if len(result.queries) > 1:
        lines.append("rewrites: " + " | ".join(result.queries[1:]))
    lines.append("context:")
    for i, node in enumerate(result.contexts, start=1):
        text = node.get_content().replace("\n", " ")
        text = text if len(text) <= preview else text[:preview] + "…"
        score = "" if node.score is None else f"score {node.score:.3f}"
        lines.append(f"  {i}. {node.uid}  {score}  via {_via(node)}  {text}")
    return "\n".join(lines)


def answer_html(result: RAGAnswer, gold: str | None = None) -> str:
    """The answer as HTML: retrieved context in a collapsible block, gold text highlighted."""
    label = BACKEND_LABELS.get(result.backend, result.backend)
    rows = []
    for i, node in enumerate(result.contexts, start=1):
        style = " style='background:#e6ffe6'" if gold and node.text == gold else ""
        score = "" if node.score is None else f"{node.score:.3f}"
        rows.append(f"<tr{style}><td>{i}</td><td>{html.escape(score)}</td>"
                    f"<td>{html.escape(_via(node))}</td>"
                    f"<td>{html.escape(node.get_content())}</td></tr>")
    return (f"<p><b>A:</b> {html.escape(str(result.answer))} <i>[{html.escape(label)}]</i> "
            f"({result.seconds:.2f} s)</p><details><summary>retrieved context "
            f"({len(result.contexts)})</summary><table><tr><th>#</th><th>score</th>"
            f"<th>found by</th><th>text</th></tr>{''.join(rows)}</table></details>")


def chat_panel(rag: MultiPathRAG, placeholder: str = "输入问题，例如：长城东起哪里？") -> Any:
    """An ipywidgets panel: type a question, press Enter or 'Ask', read the answer."""
    import ipywidgets as widgets

    # continuous_update=False: the value changes (and we answer) on Enter, not per keystroke.
    box = widgets.Text(placeholder=placeholder, continuous_update=False,
                       layout=widgets.Layout(width="70%"))
    button = widgets.Button(description="Ask", button_style="primary")
    output = widgets.HTML()

    def ask(_: Any = None) -> None:
        question = box.value.strip()
        if not question:
            output.value = "<i>Type a question first.</i>"
            return
        try:
            output.value = answer_html(rag.ask(question))
        except Exception as error:  # show, don't crash the panel
            output.value = f"<b>error:</b> {html.escape(str(error))}"

    button.on_click(ask)
    box.observe(ask, names="value")
    return widgets.VBox([widgets.HBox([box, button]), output])


def explore(kb: Any, question: str, pipeline: str = "bm25-paragraph", group: str = "paragraph",
            similarity: str = "bm25_chinese", topk: int = 5, cut_off: float | None = None,
            cache: dict[str, Any] | None = None) -> str:
    """Ranked nodes for one question as HTML; the gold paragraph (if the question is one of
    ``kb``'s) is highlighted. ``pipeline="custom"`` uses ``group``/``similarity``/``topk``."""
    from .pipelines import build_pipeline, knowledge_base_document
    from .retriever import Retriever

    validate_query(question)
    topk = validate_topk(topk)
    cut_off = None if cut_off is None else check_number(cut_off, "cut_off")
    cache = {} if cache is None else cache  # at most one entry per pipeline name
    if pipeline == "custom":
        if "doc" not in cache:
            cache["doc"] = knowledge_base_document(kb, embed=True)
        nodes = Retriever(cache["doc"], group, similarity, topk=topk,
                          similarity_cut_off=cut_off)(question)
    else:
        if pipeline not in cache:
            cache[pipeline] = build_pipeline(pipeline, kb).retrieve
        nodes = [n for n in cache[pipeline](question)[:topk]
                 if passes(n.score, cut_off)]
    gold = next((q.paragraph for q in kb.questions if q.question == question), None)
    rows = []
    for rank, node in enumerate(nodes, start=1):
        style = " style='background:#e6ffe6'" if gold is not None and node.text == gold else ""
        score = "" if node.score is None else f"{node.score:.3f}"
        rows.append(f"<tr{style}><td>{rank}</td><td>{score}</td><td>{html.escape(node.uid)}</td>"
                    f"<td>{html.escape(node.text[:160])}</td></tr>")
    found = "" if gold is None else (" — gold paragraph found" if any(
        n.text == gold for n in nodes) else " — gold paragraph <b>not</b> in the results")
    return (f"<p>{len(nodes)} results{found}</p><table><tr><th>#</th><th>score</th>"
            f"<th>node</th><th>text</th></tr>{''.join(rows)}</table>")


def query_explorer(kb: Any, pipelines: tuple[str, ...] = (
        "bm25-paragraph", "bm25-char-paragraph", "cosine-paragraph", "multipath-rerank",
        "custom")) -> Any:
    """A widget: type (or pick) a question, choose pipeline / group / similarity / top-k /
    cut-off, see the ranked nodes with scores and the gold paragraph highlighted.

    ``kb`` must hold questions (``kb.questions``, as from :func:`load_cmrc2018_kb`): the
    explorer starts on the first and offers the first 200. For a knowledge base without
    any, call :func:`explore` with your own question.
    """
    questions = getattr(kb, "questions", None)
    if not questions:
        raise ValueError("query_explorer needs a knowledge base with questions "
                         f"(kb.questions is {'missing' if questions is None else 'empty'}): "
                         "load one with questions (e.g. load_cmrc2018_kb()), or call "
                         "explore(kb, 'your question') instead")
    import ipywidgets as widgets

    from .similarity import SIMILARITIES

    cache: dict[str, Any] = {}  # one entry per pipeline name: bounded
    question = widgets.Combobox(value=kb.questions[0].question, ensure_option=False,
                                options=[q.question for q in kb.questions[:200]],
                                description="question", layout=widgets.Layout(width="90%"))
    pipeline = widgets.Dropdown(options=list(pipelines), description="pipeline")
    group = widgets.Dropdown(options=["paragraph", "CoarseChunk", "MediumChunk", "FineChunk"],
                             description="group")
    similarity = widgets.Dropdown(options=sorted(SIMILARITIES), value="bm25_chinese",
                                  description="similarity")
    topk = widgets.IntSlider(value=5, min=1, max=20, description="top k")
    cut_off = widgets.FloatText(value=0.0, description="cut-off")
    use_cut = widgets.Checkbox(value=False, description="apply cut-off")
    output = widgets.HTML()

    def update(_: Any = None) -> None:
        custom = pipeline.value == "custom"
        group.disabled = similarity.disabled = not custom
        try:
            output.value = explore(kb, question.value, pipeline.value, group.value,
                                   similarity.value, topk.value,
                                   cut_off.value if use_cut.value else None, cache)
        except Exception as error:  # show, don't crash the widget
            output.value = f"<b>error:</b> {html.escape(str(error))}"

    for control in (question, pipeline, group, similarity, topk, cut_off, use_cut):
        control.observe(update, names="value")
    update()
    return widgets.VBox([question, widgets.HBox([pipeline, group, similarity]),
                         widgets.HBox([topk, cut_off, use_cut]), output])


def threshold_slider(sweep_rows: list[dict[str, float]], k: int = 5,
                     name: str | None = None) -> Any:
    """A slider over a cut-off sweep: moving it redraws the chart with the chosen point.
    ``name`` says what the cut-off is on (e.g. ``"cosine (e5)"``) in the chart's legend."""
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

    slider = widgets.SelectionSlider(options=[r["cut_off"] for r in sweep_rows],
                                     description="cut-off")
    label = widgets.HTML()
    output = widgets.Output()

    def update(_: Any = None) -> None:
        row = next(r for r in sweep_rows if r["cut_off"] == slider.value)
        label.value = (f"cut-off {row['cut_off']:g}: recall@{k} {row[f'recall@{k}']:.3f}, "
                       f"context relevance@{k} {row[f'context_relevance@{k}']:.3f}, "
                       f"{row['mean_kept']:.2f} kept per question")
        figure = threshold_chart(sweep_rows if name is None else {name: sweep_rows}, k)
        figure.add_scatter(x=[row[f"context_relevance@{k}"]], y=[row[f"recall@{k}"]],
                           mode="markers", name="chosen",
                           marker={"size": 20, "color": "red", "symbol": "circle-open"})
        output.clear_output(wait=True)
        with output:
            show(figure)

    slider.observe(update, names="value")
    update()
    return widgets.VBox([slider, label, output])
