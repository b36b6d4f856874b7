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
