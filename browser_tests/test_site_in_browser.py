"""The course's website (``make site``) in Chromium, as a reader meets it, served over HTTP.

The landing page and five lessons are opened, in English and in the Chinese edition
(``zh-CN/``). On each: every picture loads (its natural size is above 0), code and its outputs
show, the worked solution is folded until it is clicked; a formula is drawn by MathJax (served
by the site itself, as are the accessibility parts its menu loads); the sidebar leads from page
to page; each kind of page's language switch leads to the same page in the other language and
back; the search box finds a word from a lesson, English and Chinese, in either edition.
Throughout, no request leaves 127.0.0.1, none fails, and the browser's console shows no error.

Run by ``make site-test`` (``.ci/run`` does), after ``make site`` has built ``_build/site/html``
(``COURSE_SITE`` names another folder). Not part of ``make test``: a learner who never builds
the site needs none of its packages.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO, unavailable
from .lab_driver import artifacts_dir

SITE = Path(os.environ.get("COURSE_SITE", REPO / "_build" / "site" / "html"))
LESSONS = ("notebooks/01_evaluating_retrieval.html", "notebooks/06_embeddings_and_similarity.html",
           "notebooks/07_similarity_thresholds.html", "notebooks/10_benchmark_report.html",
           "notebooks/12_knowing_when_to_say_no.html")

# `make site SOLUTIONS=0` (graded labs) leaves the worked solutions out; the contents page says
# whether they are in.
SOLUTIONS_PUBLISHED = (SITE / "lessons.html").is_file() and \
    "worked solution folded" in (SITE / "lessons.html").read_text(encoding="utf-8")

# Every <img> of the article with its natural size (0 × 0: it did not load).
PICTURES = """() => [...document.querySelectorAll('article img')].map(img =>
    ({src: img.getAttribute('src'), alt: img.getAttribute('alt'), complete: img.complete,
      width: img.naturalWidth, height: img.naturalHeight}))"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the server is quiet
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """The built site on 127.0.0.1 (a real HTTP server, as a host would serve it)."""
    if not (SITE / "index.html").is_file():
        unavailable(f"no website in {SITE}: build it with `make site` (`make site-test` does)")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture
def page(browser: Any, site: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh page that records every request, failed response and console error; a test fails
    if anything left the machine, failed to load, or was logged as an error."""
    context = browser.new_context(viewport={"width": 1300, "height": 950})
    page = context.new_page()
    outside, failed, errors = [], [], []
    page.on("request", lambda r: None if r.url.startswith((site, "data:", "blob:"))
            else outside.append(r.url))
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    page.on("response", lambda r: failed.append(f"{r.url}: HTTP {r.status}")
            if r.status >= 400 else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        folder = artifacts_dir()
        page.screenshot(path=str(folder / f"site-{request.node.name}.png"), full_page=True)
        print(f"screenshot: {folder / f'site-{request.node.name}.png'} ({page.url})")
    context.close()
    assert not outside, f"requests left the machine: {outside}"
    assert not failed, f"requests failed: {failed}"
    assert not errors, f"console errors: {errors}"


def test_the_landing_page_is_the_readme_and_leads_to_the_lessons(page: Any, site: str) -> None:
    page.goto(site)
    assert "Upgrading the recall of a RAG system" in page.inner_text("article h1")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make reproduce" in readme and "make reproduce" in page.inner_text("article")
    # The README's notebook table links each notebook to its lesson page.
    page.click("article table a:has-text('07_similarity_thresholds')")
    page.wait_for_url("**/notebooks/07_similarity_thresholds.html")
    assert page.inner_text("article h1").startswith("07 · Similarity thresholds")


def test_the_chinese_landing_page_is_the_chinese_readme_and_leads_to_its_lessons(
        page: Any, site: str) -> None:
    page.goto(site + "zh-CN/")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert "召回率" in page.inner_text("article h1")
    page.click("article table a:has-text('07_similarity_thresholds')")
    page.wait_for_url("**/zh-CN/notebooks/07_similarity_thresholds.html")
    assert page.inner_text("article h1").startswith("07 · 相似度阈值")
    page.click("nav.bd-docs-nav a:has-text('08 · 重排序')")  # the sidebar is in Chinese too
    page.wait_for_url("**/zh-CN/notebooks/08_reranking.html")


def test_the_chinese_contents_page_shows_each_lessons_goals_and_time(page: Any,
                                                                     site: str) -> None:
    page.goto(site + "zh-CN/lessons.html")
    assert page.locator("article section section").count() == len(
        list((REPO / "notebooks" / "zh-CN").glob("[0-9][0-9]_*.ipynb")))
    text = page.inner_text("article")
    assert "时长： 约 40 分钟" in text or "时长：约 40 分钟" in text, text[:400]
    assert "**" not in text, "Markdown bold that did not render"
    assert page.locator("article strong:has-text('时长：')").count() == 14


PAGES = ("index.html", "lessons.html", "notebooks/07_similarity_thresholds.html",
         "docs/teaching.html", "report.html", "library.html", "library/lab/data/squad.py.html")


@pytest.mark.parametrize("path", PAGES)
def test_every_page_switches_to_itself_in_the_other_language(page: Any, site: str,
                                                              path: str) -> None:
    page.goto(site + path)
    english_title = page.inner_text("article h1")
    switch = page.locator("article p.language-switch a")
    assert switch.count() == 1 and switch.inner_text() == "简体中文"
    switch.click()
    page.wait_for_url(site + "zh-CN/" + path)
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    chinese_title = page.inner_text("article h1")
    if not path.startswith("library/"):  # a module's page is titled by its file name
        assert chinese_title != english_title
        assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese_title), chinese_title
    page.locator("article p.language-switch a:has-text('English')").click()
    page.wait_for_url(site + path)
    assert page.inner_text("article h1") == english_title


def test_the_table_of_contents_shows_each_lessons_goals_and_time(page: Any, site: str) -> None:
    page.goto(site + "lessons.html")
    sections = page.locator("article section section")
    assert sections.count() == len(list((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")))  # 14
    text = page.inner_text("article")
    assert "Time: about 40 minutes" in text and "explain what a similarity cut-off does" in text


@pytest.mark.parametrize(("edition", "method"), [("", "Method."), ("zh-CN/", "方法。")],
                         ids=["en", "zh-CN"])
@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_shows_its_code_outputs_pictures_and_a_folded_solution(
        page: Any, site: str, lesson: str, edition: str, method: str) -> None:
    page.goto(site + edition + lesson)
    page.wait_for_load_state("load")
    pictures = page.evaluate(PICTURES)
    assert pictures, f"{lesson}: no picture"
    unloaded = [p for p in pictures if not (p["complete"] and p["width"] > 0 and p["height"] > 0)]
    assert not unloaded, f"{lesson}: pictures that did not load: {unloaded}"
    assert all(p["alt"].startswith("Picture: ") for p in pictures), pictures  # described
    code = page.locator("article .cell_input")
    outputs = page.locator("article .cell_output")
    assert code.count() >= 5 and outputs.count() >= 5
    assert code.first.is_visible() and outputs.first.is_visible()
    assert "course_lib 0.1.0" in outputs.first.inner_text()  # the version cell's output
    solution = page.locator("details.worked-solution")
    if not SOLUTIONS_PUBLISHED:  # built with `make site SOLUTIONS=0`, for graded labs
        assert solution.count() == 0
        return
    assert solution.count() == 1
    assert not solution.evaluate("d => d.open"), "the worked solution must start folded"
    assert not solution.locator("pre").first.is_visible()
    solution.locator("summary").click()
    assert solution.evaluate("d => d.open")
    assert solution.locator("pre").first.is_visible()
    assert method in solution.inner_text()


def test_a_formula_is_drawn_by_mathjax_from_the_site(page: Any, site: str) -> None:
    page.goto(site + "notebooks/01_evaluating_retrieval.html")
    page.wait_for_selector("mjx-container[display='true']", timeout=20_000)
    formulas = page.locator("mjx-container[display='true']")
    assert formulas.count() >= 2
    box = formulas.first.bounding_box()
    assert box and box["width"] > 50 and box["height"] > 15
    assert page.locator("mjx-merror").count() == 0, "a formula MathJax could not read"
    assert "\\frac" not in page.inner_text("article"), "TeX source shown instead of a formula"
    # The menu's accessibility option (speech, explorer) loads more of MathJax: from the site too.
    with page.expect_response("**/_static/mathjax/sre/mathmaps/en.json", timeout=30_000):
        page.evaluate("() => MathJax.startup.document.menu.menu"
                      ".findID('Accessibility', 'Activate').variable.setValue(true)")


def test_the_sidebar_navigates(page: Any, site: str) -> None:
    page.goto(site)
    page.click("nav.bd-docs-nav a:has-text('08 · Reranking')")
    page.wait_for_url("**/notebooks/08_reranking.html")
    assert page.inner_text("article h1").startswith("08 · Reranking")
    page.click("nav.bd-docs-nav a:has-text('Teaching with this course')")
    page.wait_for_url("**/docs/teaching.html")
    page.click("nav.bd-docs-nav a:has-text('The benchmark report')")
    page.wait_for_url("**/report.html")
    assert page.locator("article .cell_input").count() == 0, "the report shows no code"
    assert page.evaluate(PICTURES), "the report shows its pictures"


@pytest.mark.parametrize(("edition", "word", "lesson"), [
    ("", "McNemar", "01_evaluating_retrieval"), ("", "奥运会", "01_evaluating_retrieval"),
    ("zh-CN/", "置信区间", "01_evaluating_retrieval")])
def test_the_search_box_finds_a_word_from_a_lesson(page: Any, site: str, edition: str,
                                                    word: str, lesson: str) -> None:
    page.goto(site + edition + "lessons.html")
    page.locator("button.search-button-field:visible").first.click()  # opens the search dialog
    box = page.locator("#pst-search-dialog input[name='q']")
    box.fill(word)
    box.press("Enter")
    page.wait_for_url("**/search.html?q=*")
    page.wait_for_selector("#search-results ul.search li", timeout=20_000)
    found = page.eval_on_selector_all("#search-results ul.search li a",
                                      "links => links.map(a => a.getAttribute('href'))")
    assert any(lesson in href for href in found), f"{word}: {found}"
