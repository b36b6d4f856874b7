"""Fixtures of the browser test: Chromium, Playwright, one JupyterLab server, and pages.

Without Chromium or Playwright the tests are skipped with the reason - except in CI (``CI``
set), where a missing browser is a failure. A failing test leaves a screenshot, the browser's
console log and the server's log in ``lab_driver.artifacts_dir()``, and prints where.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .lab_driver import CHROMIUM_ARGS, JupyterLab, NotebookPage, artifacts_dir, find_chromium

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("01_evaluating_retrieval.ipynb", "07_similarity_thresholds.ipynb",
             "09_multipath_rag.ipynb", "10_benchmark_report.ipynb")


def unavailable(reason: str) -> None:
    """Skip (a learner's machine without a browser) - but fail in CI, which must run it."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser test must run: .ci/run installs "
                    "Chromium with apt-get", pytrace=False)
    pytest.skip(f"browser test skipped: {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture(scope="session")
def chromium() -> str:
    path = find_chromium()
    if path is None and os.environ.get("COURSE_CHROMIUM"):
        unavailable(f"COURSE_CHROMIUM={os.environ['COURSE_CHROMIUM']} is not a file")
    if path is None:
        unavailable("Chromium was not found (Debian/Ubuntu: `apt-get install chromium`; or set "
                    "COURSE_CHROMIUM to a Chrome or Chromium executable)")
    return path


@pytest.fixture(scope="session")
def browser(chromium: str) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright is not installed (`pip install -c constraints.txt -r "
                    "requirements.txt`)")
    with sync_playwright() as playwright:
        # The system browser: Playwright cannot download its own here.
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def lab(browser: Any) -> Iterator[JupyterLab]:
    with JupyterLab([REPO / "notebooks" / name for name in NOTEBOOKS]) as server:
        yield server


@pytest.fixture(scope="session")
def kb() -> Any:
    """The CMRC 2018 knowledge base (for a known question and its gold paragraph)."""
    from course_lib.lab.data.datasets import DatasetUnavailableError, load_cmrc2018_kb

    try:
        return load_cmrc2018_kb()
    except DatasetUnavailableError as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"CMRC 2018 not available: {error}")


@pytest.fixture
def open_notebook(browser: Any, lab: JupyterLab,
                  request: pytest.FixtureRequest) -> Iterator[Callable[[str], NotebookPage]]:
    """``open_notebook(name)``: the notebook's copy open in a fresh page, kernel idle."""
    opened: list[tuple[Any, NotebookPage]] = []

    def open_(name: str) -> NotebookPage:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        notebook = NotebookPage(page, lab, name, test=request.node.name)
        opened.append((context, notebook))
        notebook.open()
        return notebook

    yield open_
    report = getattr(request.node, "report_call", None)
    failed = report is None or report.failed
    for context, notebook in opened:
        try:
            if failed:  # the page as the test left it: every cell with an output
                notebook.save_artifacts("end", cells=None)
                print(f"browser test artifacts (screenshots, console and server logs) in "
                      f"{artifacts_dir()}:\n  " + "\n  ".join(notebook.saved))
                print("last console messages:\n  " + "\n  ".join(notebook.console[-30:]))
        finally:
            context.close()
    lab.shutdown_kernels()  # free the memory of this notebook's kernel for the next one
