"""The course as a learner meets it: notebooks 01, 07, 09 and 10 in JupyterLab 4 in Chromium.

Each notebook is opened from an untrusted copy (as after a fresh clone): its committed
pictures must show before anything runs. Then Run All must finish with no error, no blank
output area, no widget or picture repr in place of the thing, and nothing on the browser
console. Then the widgets are used as a learner would: the query explorer (01), the cut-off
slider (07) and the chat panel (09); notebook 10 is also run with interactive (plotly)
figures, as on a machine without Chromium, which must draw offline.

The widgets are found by the CSS classes ``course_lib.lab.show.widgets`` gives them (``course-*``).
Runs in ``make test``, after ``make data`` has filled the data cache.
"""

from __future__ import annotations

import re
from typing import Any

from .lab_driver import NotebookPage, noise_in

# Highlighted gold rows under ``root``: marked gold, and drawn so (a background colour).
GOLD_ROWS = """root => [...root.querySelectorAll('tr.course-gold')].filter(tr =>
    !['rgba(0, 0, 0, 0)', 'transparent'].includes(getComputedStyle(tr).backgroundColor))
    .map(tr => tr.innerText)"""

# Records every value the explorer's output shows (each update replaces its content), so
# that passing states ("working…") are seen too, not only the last one.
RECORD_UPDATES = """root => {
    window.__updates = [];
    new MutationObserver(records => { for (const r of records) {
        if (!r.addedNodes.length || !r.target.closest
            || !r.target.closest('.course-explorer-output')) continue;
        const nodes = [...r.addedNodes];
        window.__updates.push({
            text: nodes.map(n => n.textContent).join('').trim(),
            working: nodes.some(n => n.nodeType === 1 && (n.matches('.course-working')
                                      || n.querySelector('.course-working')))});
    } }).observe(root, {childList: true, subtree: true});
}"""


class Findings:
    """The problems one test has found. Each is printed when found, so that it shows in the
    report even when a later step fails outright; ``finish`` fails the test if there are any.
    Checking everything in one run tells CI's reader all that is wrong at once."""

    def __init__(self, notebook: NotebookPage) -> None:
        self.notebook, self.problems = notebook, []

    def check(self, ok: object, problem: str, cells: list[int] | None = None) -> None:
        """Record ``problem`` unless ``ok``, with screenshots of the page and of ``cells``
        as they are now (a later step may change them)."""
        if not ok:
            self.problems.append(f"{self.notebook.name}: {problem}")
            print(f"PROBLEM {self.problems[-1]}")
            self.notebook.save_artifacts(f"problem{len(self.problems)}", cells or [])

    def finish(self) -> None:
        errors = self.notebook.errors
        self.check(not errors, "errors on the browser console:\n  " + "\n  ".join(errors))
        assert not self.problems, "\n".join(self.problems)


def check_pictures_before_run(notebook: NotebookPage, found: Findings,
                              required: bool = False) -> None:
    """Committed pictures show as images in the untrusted notebook; no repr in their place."""
    committed = notebook.committed_picture_outputs()
    found.check(committed or not required, "no committed picture to show")
    if committed:
        try:
            notebook.wait_images_loaded(committed, timeout_s=10)
        except Exception:  # reported just below, with what is missing
            pass
    outputs = notebook.outputs()
    loaded = sum(o["loaded"] for o in outputs)
    broken = sum(o["broken"] for o in outputs)
    noise = [(o["cell"], n) for o in outputs for n in noise_in(o["text"])]
    found.check(not noise, "opened untrusted before running, it shows text in place of "
                f"pictures or widgets (cell, text): {noise}", sorted({c for c, _ in noise}))
    found.check(broken == 0, f"{broken} committed image(s) do not load")
    found.check(loaded >= committed, f"{committed} committed picture output(s), but only "
                f"{loaded} render as images before running")


def run_all_cleanly(notebook: NotebookPage, found: Findings) -> None:
    """Run All: every cell runs, none fails, and every output shows something real."""
    state = notebook.run_all()
    assert not state["errors"], f"{notebook.name}: cells failed under Run All: {state['errors']}"
    assert state["pending"] == 0, f"{notebook.name}: cells left unrun: {state}"
    check_outputs(notebook, found)


# A chart drawn by plotly's JupyterLab extension (plotly.js marks its graph div so).
DRAWN_CHARTS = """() => [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea .js-plotly-plot')]
    .filter(plot => plot.querySelector('.main-svg')).length"""


def check_outputs(notebook: NotebookPage, found: Findings) -> None:
    """No output area is blank, shows a repr instead of the thing, or holds a broken image.
    Pictures and interactive charts are given time to draw first."""
    try:
        images = sum(o["images"] for o in notebook.outputs())
        if images:
            notebook.wait_images_loaded(images)
        charts = notebook.page.locator(".jp-OutputArea .js-plotly-plot").count()
        if charts:
            notebook.page.wait_for_function(f"n => ({DRAWN_CHARTS})() >= n", arg=charts,
                                            timeout=30_000)
    except Exception:  # what did not draw is reported below as blank or broken
        pass
    outputs = notebook.outputs()
    noise = [(o["cell"], n) for o in outputs for n in noise_in(o["text"])]
    found.check(not noise, f"text in place of pictures or widgets (cell, text): {noise}",
                sorted({c for c, _ in noise}))
    blank = [(o["cell"], o["mime"]) for o in outputs
             if o["height"] < 2 or (not o["text"].strip() and not o["media"])]
    found.check(not blank, f"blank output areas (cell, MIME type): {blank}",
                sorted({c for c, _ in blank}))
    broken = [o["cell"] for o in outputs if o["broken"]]
    found.check(not broken, f"images that do not load, in cells {broken}", broken)


def numbers(text: str) -> list[str]:
    """The numbers in ``text``, as written.

    >>> numbers("cut-off 0.88: recall@5 0.858, 1.04 kept")
    ['0.88', '5', '0.858', '1.04']
    """
    return re.findall(r"\d+(?:\.\d+)?", text)


def test_01_query_explorer(open_notebook: Any, kb: Any) -> None:
    notebook = open_notebook("01_evaluating_retrieval.ipynb")
    found = Findings(notebook)
    check_pictures_before_run(notebook, found)
    run_all_cleanly(notebook, found)

    at = [notebook.cell_index("query_explorer(")]  # the cell to photograph on a problem
    explorer = notebook.cell(at[0]).locator(".course-query-explorer")
    explorer.locator(".course-explorer-output").wait_for()
    root = explorer.element_handle()
    root.evaluate(RECORD_UPDATES)

    def gold_rows() -> list[str]:
        return root.evaluate(GOLD_ROWS)

    def settle(shows: str) -> list[dict[str, Any]]:
        """Wait for a result (not a 'working' state) containing ``shows``, then until the
        kernel has handled every event sent; return every update seen since the last call."""
        notebook.page.wait_for_function(
            "shows => window.__updates.some(u => !u.working && u.text.includes(shows))",
            arg=shows, timeout=120_000)
        notebook.barrier()
        updates = notebook.page.evaluate("() => window.__updates.splice(0)")
        found.check(not updates[-1]["working"], "explorer: 'working…' is left on screen", at)
        return updates

    def results(updates: list[dict[str, Any]]) -> list[str]:
        return [u["text"] for u in updates if u["text"] and not u["working"]]

    # 1. A known question whose gold paragraph is not the starting question's, typed key
    #    by key, then Enter: one retrieval, and its gold paragraph highlighted.
    question = next(q for q in kb.questions[1:200]
                    if q.paragraph != kb.questions[0].paragraph)
    gold_start = question.paragraph[:20]
    box = explorer.locator(".course-explorer-question input")
    box.click()
    box.press("Control+A")
    box.press_sequentially(question.question, delay=60)  # about a person's typing speed
    box.press("Enter")
    updates = settle(gold_start)
    found.check(len(results(updates)) == 1,
                f"explorer: typing a {len(question.question)}-character question then Enter "
                f"showed results {len(results(updates))} times, not once (it retrieves while the "
                "question is typed)", at)
    found.check(any(gold_start in row for row in gold_rows()),
                f"explorer: no highlighted gold row for a known question: {results(updates)}", at)

    # 2. A slower pipeline: "working…" shows while it computes, then its results.
    pipeline = explorer.locator(".course-explorer-pipeline select")
    pipeline.select_option("multipath-rerank")
    updates = settle(gold_start)
    found.check(updates[0]["working"], "explorer: no 'working…' before the results of "
                f"multipath-rerank (it showed {[u['text'][:50] for u in updates]})", at)
    found.check(any(gold_start in row for row in gold_rows()),
                "explorer: no highlighted gold row with multipath-rerank", at)

    # 3. Chunks: a chunk cut from the gold paragraph counts as gold.
    pipeline.select_option("custom")
    settle(gold_start)
    explorer.locator(".widget-dropdown", has_text="group").locator("select").select_option(
        "MediumChunk")
    updates = settle("MediumChunk")
    summary = explorer.locator(".course-explorer-summary").inner_text()
    found.check("not in the results" not in summary and gold_rows(),
                f"explorer, group MediumChunk: no chunk marked gold: {summary!r}", at)

    # 4. A cut-off nothing passes: a sentence saying so, not a bare table header.
    explorer.locator(".widget-checkbox input[type=checkbox]").check()
    settle("MediumChunk")
    cut_off = explorer.locator(".widget-text", has_text="cut-off").locator("input")
    cut_off.fill("1000")
    cut_off.press("Enter")
    explorer.locator(".course-explorer-empty").wait_for(timeout=60_000)
    notebook.barrier()
    bare = root.evaluate("r => [...r.querySelectorAll('table')].filter("
                         "t => !t.querySelector('td')).length")
    found.check(bare == 0, "explorer: zero results leave a bare table header", at)
    found.finish()


def test_07_cut_off_slider(open_notebook: Any) -> None:
    notebook = open_notebook("07_similarity_thresholds.ipynb")
    found = Findings(notebook)
    check_pictures_before_run(notebook, found)
    run_all_cleanly(notebook, found)

    at = [notebook.cell_index("threshold_slider(")]  # the cell to photograph on a problem
    widget = notebook.cell(at[0]).locator(".course-threshold-slider")
    label = widget.locator(".course-slider-label")
    chart = widget.locator(".course-slider-chart .jp-OutputArea-output")
    label.wait_for()
    chart.wait_for()
    before_label, before_chart = label.inner_text(), chart.inner_html()
    found.check(numbers(before_label),
                f"the slider's label has no numbers: {before_label!r}", at)

    # Drag the handle to the right end of its track, as a learner does with the mouse.
    handle = widget.locator(".noUi-handle")
    track = widget.locator(".noUi-base")
    handle.scroll_into_view_if_needed()
    start, end = handle.bounding_box(), track.bounding_box()
    mouse = notebook.page.mouse
    mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    mouse.down()
    mouse.move(end["x"] + end["width"] + 20, start["y"] + start["height"] / 2, steps=8)
    mouse.up()
    notebook.page.wait_for_function("([el, text]) => el.innerText !== text",
                                    arg=[label.element_handle(), before_label], timeout=60_000)
    notebook.barrier()
    after_label = label.inner_text()
    found.check(numbers(after_label) != numbers(before_label),
                f"moving the slider left the label's numbers as they were: {after_label!r}", at)
    check_outputs(notebook, found)
    found.check(chart.inner_html() != before_chart,
                "moving the slider left the chart as it was", at)
    found.finish()


def test_09_chat_panel_asks_once(open_notebook: Any, kb: Any) -> None:
    notebook = open_notebook("09_multipath_rag.ipynb")
    found = Findings(notebook)
    check_pictures_before_run(notebook, found)
    # Count the panel's calls: a cell before the panel's wraps the RAG object's ask().
    panel_cell = notebook.cell_index("chat_panel(")
    source = notebook.js(
        "i => panel().content.model.cells.get(i).sharedModel.getSource()", panel_cell)
    rag = re.search(r"chat_panel\(\s*(\w+)", source).group(1)
    notebook.insert_code_cell(panel_cell, (
        "# Inserted by the browser test: count the chat panel's calls of ask().\n"
        f"_browser_test_calls = []\n_browser_test_ask = {rag}.ask\n\n\n"
        "def _counted_ask(*args, **kwargs):\n"
        "    _browser_test_calls.append(args)\n"
        "    return _browser_test_ask(*args, **kwargs)\n\n\n"
        f"{rag}.ask = _counted_ask"))
    run_all_cleanly(notebook, found)

    at = [panel_cell + 1]  # the cell to photograph on a problem
    chat = notebook.cell(at[0]).locator(".course-chat-panel")
    box = chat.locator(".course-chat-question input")
    box.click()
    box.press_sequentially(kb.questions[1].question, delay=60)
    chat.locator(".course-chat-ask").click()
    answer = chat.locator(".course-chat-output")
    notebook.page.wait_for_function(
        "el => el.querySelector('.course-done') && /A:\\s*\\S/.test(el.innerText)",
        arg=answer.element_handle(), timeout=120_000)
    notebook.barrier()
    calls = notebook.run_code("print(len(_browser_test_calls))").strip()
    found.check(calls == "1", f"chat panel: one question typed then 'Ask' clicked called ask() "
                f"{calls} times (leaving the box submits, then the click submits again)", at)
    check_outputs(notebook, found)
    found.finish()


def test_10_pictures_show_before_running(open_notebook: Any) -> None:
    notebook = open_notebook("10_benchmark_report.ipynb")
    found = Findings(notebook)
    check_pictures_before_run(notebook, found, required=True)
    # Then run it as on a machine without Chromium (no pictures: interactive figures),
    # which must draw offline, through plotly's JupyterLab extension, not from a CDN.
    notebook.insert_code_cell(0, (
        "# Inserted by the browser test: interactive figures, as without Chromium.\n"
        "import functools\n\nfrom course_lib.lab.show import plots\n\n"
        "plots.show = functools.partial(plots.show, interactive=True)"))
    run_all_cleanly(notebook, found)
    committed = notebook.committed_picture_outputs()
    try:
        notebook.page.wait_for_function(f"n => ({DRAWN_CHARTS})() >= n", arg=committed,
                                        timeout=30_000)
    except Exception:  # reported just below
        pass
    drawn = notebook.page.evaluate(DRAWN_CHARTS)
    found.check(drawn >= committed, f"{committed} pictures, but {drawn} interactive charts "
                "drawn when run without pictures (as without Chromium)")
    found.finish()
