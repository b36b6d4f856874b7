"""The website's sources (tools/build_site.py) and its link check (tools/site_links.py).

These need no Sphinx: they check what is staged for the site. Building it and opening it in a
browser is ``make site-test`` (browser_tests/test_site_in_browser.py).
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
_spec = importlib.util.spec_from_file_location("build_site", ROOT / "tools" / "build_site.py")
site = importlib.util.module_from_spec(_spec)  # tools/build_site.py
sys.modules["build_site"] = site  # its dataclass looks its module up while it is defined
_spec.loader.exec_module(site)
import site_links  # noqa: E402
from site_links import check_site  # noqa: E402

NOTEBOOKS = site.notebooks()


def test_the_tools_docstring_examples_hold() -> None:
    for module in (site, site_links):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_every_lesson_states_its_title_time_and_goals() -> None:
    assert [n.name[:2] for n in NOTEBOOKS] == [f"{i:02d}" for i in range(len(NOTEBOOKS))]
    for notebook in NOTEBOOKS:
        summary = site.lesson_summary(notebook)
        assert summary["title"].startswith(notebook.name[:2] + " · ")
        assert re.fullmatch(r"about \d+ minutes( to read)?", summary["time"]), summary
        assert summary["goals"].startswith("1. ") and "\n2. " in summary["goals"]


def test_the_readme_table_gives_each_lesson_the_time_the_notebook_states() -> None:
    """The README, the teacher's guide (from the README) and the site agree on every time."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for notebook in NOTEBOOKS:
        minutes = re.search(r"\d+", site.lesson_summary(notebook)["time"]).group()
        row = re.search(rf"^\| `{notebook.stem}` \|.*\| (\d+) min \|$", readme, re.MULTILINE)
        assert row, f"README: no row for {notebook.stem}"
        assert row.group(1) == minutes, f"{notebook.stem}: README {row.group(1)} min, " \
                                        f"the notebook {minutes}"


def test_a_lesson_page_folds_the_worked_solution_right_after_the_check() -> None:
    for notebook in NOTEBOOKS:
        committed = nbformat.read(notebook, as_version=4)
        lesson = site.lesson_notebook(notebook)
        assert len(lesson.cells) == len(committed.cells) + 1
        check = next(i for i, c in enumerate(lesson.cells) if c.cell_type == "code"
                     and site.CHECK_CALL.search(c.source))
        block = lesson.cells[check + 1]
        assert block.cell_type == "markdown"
        assert re.match(r"````+\{dropdown\} Worked solution", block.source)
        assert ":open:" not in block.source  # folded until the learner opens it
        _, cells = site.solution_cells(ROOT / "solutions" / f"{notebook.stem}.py")
        shown = [cell for cell in cells if cell in block.source]  # as it is in the source
        assert shown == site.worked_solution(notebook) and cells[0] in shown
        assert "def mistakes(" not in block.source and len(shown) == len(cells) - 1
        assert "widgets" not in lesson.metadata
        # Outputs are the committed ones: nothing was executed or changed.
        assert [c.get("outputs") for c in lesson.cells if c.cell_type == "code"] == \
            [c.get("outputs") for c in committed.cells if c.cell_type == "code"]
        text = "\n".join(c.source for c in lesson.cells if c.cell_type == "markdown")
        assert "_solutions.ipynb`.)*" not in text
        for cell in lesson.cells:  # every picture has its description as alt text
            if any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
                assert cell.metadata["mystnb"]["image"]["alt"].startswith("Picture: ")


def test_a_site_for_graded_labs_leaves_every_solution_out() -> None:
    for notebook in NOTEBOOKS:
        lesson = site.lesson_notebook(notebook, solutions=False)
        _, cells = site.solution_cells(ROOT / "solutions" / f"{notebook.stem}.py")
        text = nbformat.writes(lesson)
        assert "Worked solution" not in text and "dropdown" not in text
        assert cells[0].splitlines()[-1] not in "\n".join(
            c.source for c in lesson.cells if c.cell_type == "markdown")
    assert "folded" not in site.lessons_page(solutions=False)


def test_the_report_page_holds_what_docs_report_html_holds() -> None:
    """The report page is notebook 10 without code; docs/report.html must show the same text
    (`make report` writes it): every markdown line and text output of the notebook is there."""
    bs4 = pytest.importorskip("bs4")
    notebook = ROOT / "notebooks" / "10_benchmark_report.ipynb"
    report = site.report_notebook(notebook)
    code = [c for c in report.cells if c.cell_type == "code"]
    assert code and all({"remove-input", "remove-cell"} & set(c.metadata["tags"]) for c in code)
    html = bs4.BeautifulSoup((ROOT / "docs" / "report.html").read_text(encoding="utf-8"),
                             "html.parser")
    for tag in html(["script", "style"]):
        tag.decompose()
    shown = re.sub(r"\s+", "", html.get_text())
    missing = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        texts = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text" in output:
                texts.append(output["text"])
            elif "text/plain" in data and "image/png" not in data:
                texts.append(data["text/plain"])
        for text in texts:
            if re.sub(r"\s+", "", text) not in shown:
                missing.append(text[:80])
    assert not missing, f"docs/report.html is older than notebook 10 (make report): {missing}"


def test_the_library_guide_lists_every_module_once_and_links_each() -> None:
    modules = site.library_modules()
    assert sorted(modules) == sorted((ROOT / "course_lib").rglob("*.py"))
    assert len(set(modules)) == len(modules)
    assert modules[1] == ROOT / "course_lib" / "ranking.py"  # the reading path comes first
    page = site.library_page(modules)
    for name in ("node.py", "lab/data/datasets.py", "store/persist.py", "_support/validation.py"):
        assert f"(library/{name}.md)" in page, name


def test_staging_rewrites_what_changed_and_removes_only_what_it_staged(tmp_path: Path) -> None:
    src = tmp_path / "src"
    assert site.stage(src) == (len(site.staged_files()), [])
    assert (src / "index.md").is_file()
    assert site.stage(src) == (0, [])  # nothing changed: nothing rewritten (incremental)
    mine = src / "notes.md"
    mine.write_text("a reader's own file", encoding="utf-8")
    stale = src / "library" / "old_module.md"
    stale.write_text("staged by an earlier run", encoding="utf-8")
    manifest = src / site.MANIFEST
    outside = tmp_path / "precious.md"  # a manifest is data: a name that leaves src is ignored
    outside.write_text("not the tool's", encoding="utf-8")
    manifest.write_text(json.dumps(json.loads(manifest.read_text()) + [
        "library/old_module.md", "../precious.md", str(outside), "."]))
    assert site.stage(src) == (1, ["library/old_module.md"])
    assert not stale.exists() and mine.read_text(encoding="utf-8") == "a reader's own file"
    assert outside.read_text(encoding="utf-8") == "not the tool's"


def test_the_link_check_finds_missing_files_anchors_and_links_out_of_the_site(
        tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "macros.html").write_text('<p id="m">{{ pathto("x") }}</p>')
    (tmp_path / "pic.png").write_bytes(b"png")
    (tmp_path / "index.html").write_text(
        '<a id="top"></a><a href="sub/page.html#part">ok</a> <a href="gone.html">gone</a> '
        '<img src="pic.png" srcset="pic.png 1x, big.png 2x"> <a href="../../etc/passwd">out</a> '
        '<a href="#top">self</a> <a href="mailto:x@y.org">mail</a> '
        '<script src="//cdn.example.org/x.js"></script> <form action="search.html"></form> '
        '<a href="/index.html">root</a> <a href="file:///home/me/x.html">mine</a> '
        '<a href="https://[bad">bad</a> <a href="_static/macros.html#m">macro</a> '
        '<a href="sub/page%20two.html?q=1">spaced</a>')
    (tmp_path / "sub" / "page.html").write_text(
        '<h2 id="part">P</h2><a href="../index.html#nowhere">back</a> <a href="./">dir</a>')
    (tmp_path / "sub" / "page two.html").write_text("<p>two</p>")
    (tmp_path / "sub" / "index.html").write_text("<p>index</p>")
    report = check_site(tmp_path)
    assert report.pages == 4  # _static/ holds theme files, not pages
    assert report.internal == 13
    assert report.broken == [
        "index.html: gone.html: no file gone.html",
        "index.html: big.png: no file big.png",
        "index.html: ../../etc/passwd: leaves the site",
        "index.html: search.html: no file search.html",
        "index.html: /index.html: a link from the site's root (breaks under a sub-path): "
        "make it relative",
        "index.html: file:///home/me/x.html: a file: link works on one machine only",
        "index.html: https://[bad: not a URL (Invalid IPv6 URL)",
        'sub/page.html: ../index.html#nowhere: no id "nowhere" in index.html',
    ]
    assert report.external == ["//cdn.example.org/x.js"]


def test_both_editions_stage_the_same_pages_and_the_chinese_ones_are_chinese() -> None:
    english = site.staged_files()
    chinese = site.staged_files(edition=site.CHINESE)
    assert sorted(chinese) == sorted(english)  # the language switch links page to namesake
    for name in ("index.md", "lessons.md", "docs/teaching.md", "library.md"):
        assert chinese[name] != english[name] and "的" in chinese[name], name
    assert "参考解答 —— 先自己试过再打开" in chinese["notebooks/07_similarity_thresholds.ipynb"]
    assert "**方法。**" in chinese["notebooks/07_similarity_thresholds.ipynb"]
    # Its links to the English README and guide lead to its own pages (the switch goes across).
    assert "](README.md)" not in chinese["index.md"]
    assert "](docs/teaching.zh-CN.md)" not in chinese["index.md"]


def test_every_chinese_lesson_states_its_title_time_and_goals() -> None:
    for notebook in site.notebooks(site.CHINESE):
        summary = site.lesson_summary(notebook, site.CHINESE)
        assert summary["title"].startswith(notebook.name[:2] + " · ")
        assert re.fullmatch(r"(阅读)?约 \d+ 分钟", summary["time"]), summary
        assert summary["goals"].startswith("1. ") and "\n2. " in summary["goals"]
    page = site.lessons_page(edition=site.CHINESE)
    assert page.count("\n## [") == len(NOTEBOOKS) and "时长：" in page
