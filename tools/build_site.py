"""`make site`: the course as a website, from the committed notebooks — nothing is re-executed.

The pages are staged from the repository's own files into ``_build/site/src`` and built by
Sphinx (myst-nb, sphinx-book-theme; configuration in ``site/conf.py``) into
``_build/site/html``, with warnings as errors; then every internal link and anchor is checked
(`site_links`). The staged sources:

====================================  ========================================================
``index.md``                          the README — the landing page; its notebook table links
                                      to the lessons
``lessons.md``                        the table of contents: each lesson with its time and
                                      learning goals, read from the notebook's first cell
``notebooks/NN_name.ipynb``           the notebooks with their committed outputs (pictures
                                      described by alt text); after each exercise's check, the
                                      worked solution in a folded block (from
                                      ``solutions/NN_name.py``, the single source)
``library.md``, ``library/…``         the README's reading guide to ``course_lib``, and each
                                      module's source on a page of its own
``docs/teaching.md``                  the teacher's guide
``report.ipynb``                      what ``docs/report.html`` shows: notebook 10 without code
====================================  ========================================================

    python tools/build_site.py            # stage, build, check links -> _build/site/html
    python tools/build_site.py --out DIR  # elsewhere: DIR/src, DIR/html, DIR/doctrees,
                                          # DIR/jupyter_execute (myst-nb's), external-links.txt
    python tools/build_site.py --no-solutions   # no worked solutions: for graded labs

Two editions, the same pages under the same names: English (``src/`` → ``html/``) and
Simplified Chinese (``src-zh-CN/`` → ``html/zh-CN/``, Sphinx's language ``zh_CN``) from the
translations (``README.zh-CN.md``, ``docs/teaching.zh-CN.md``, ``notebooks/zh-CN/``, the
methods in ``solutions/zh-CN/``; tools/translations.py builds them). Every page links to itself in
the other edition (``site/conf.py``'s language switch); the link check covers both.

Staged files are rewritten only when their content changes, so a second build is incremental.
Only files this tool staged are ever removed: those it no longer stages (listed in the staging
folder's manifest), and the pages Sphinx had built from them.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from line_counts import MORE_IDEAS, READING_PATH  # noqa: E402
from site_links import check_site  # noqa: E402

from course_lib.lab.teaching.classroom import solution_cells  # noqa: E402
from course_lib.lab.teaching.exercises import method  # noqa: E402
from course_lib.lab.teaching.languages import solution_in  # noqa: E402
from course_lib.store.safe_folder import write_text_atomically  # noqa: E402

MANIFEST = ".staged-by-build-site.json"
CHECK_CALL = re.compile(r'^check\("(\d\d)"', re.MULTILINE)


@dataclass(frozen=True)
class Edition:
    """One language of the site: where its texts are and the site's own words in it. Both
    editions have the same pages under the same names (the language switch relies on it); the
    Chinese one is built into ``html/zh-CN/`` from the translations (tools/translations.py)."""

    language: str                 # the course's name for it, and the folder of its pages
    sphinx: str                   # Sphinx's language (the theme's own words, the html lang)
    readme: Path
    teaching: Path
    notebooks: Path
    solution_pointer: re.Pattern[str]   # a notebook's pointer to its solution notebook
    time: re.Pattern[str]         # a notebook's first cell: its time …
    goals: re.Pattern[str]        # … and its numbered learning goals
    words: dict[str, str]


ENGLISH = Edition(
    "en", "en", ROOT / "README.md", ROOT / "docs" / "teaching.md", ROOT / "notebooks",
    re.compile(r"\*\(Solution:\s+`solutions/\w+_solutions\.ipynb`\.\)\*"),
    re.compile(r"\*\*Time:\*\* *([^.;]+)"),
    re.compile(r"\*\*Learning goals\*\*[^\n]*\n((?:(?:\d+\.| ) .*\n?)+)"),
    {"solution": "Worked solution — open it once you have tried", "method": "**Method.**",
     "from": "From `solutions/{stem}.py`, the single source of truth; `make sync` runs it and "
             "checks that it passes the check above.",
     "folded": "*(Worked solution: folded below the check.)*",
     "unpublished": "*(The worked solutions are not published on this site.)*",
     "done-in": "*(The exercise is done in {lesson}.)*",
     "report": "# The benchmark report\n\n*This page shows what `docs/report.html` shows (`make "
               "report` writes it): notebook 10's text and outputs without its code. The "
               "notebook with its code: {lesson}.*",
     "lessons": "Lessons", "reference": "Reference",
     "lessons-title": "# Lessons: goals and time\n",
     "lessons-intro": "The {count} notebooks, in the order to take them. Each states what you "
                      "will be able to do after it and how long it takes; the times are the "
                      "notebooks' own. Each ends with an exercise{folded} and review questions.\n",
     "lessons-folded": " (its worked solution folded below the check)",
     "lesson": "## [{title}](notebooks/{name})\n\n**Time:** {time}. After it you can:\n\n{goals}\n",
     "library-title": "# The library, `course_lib`: a reading guide\n",
     "library-list": "Every module, in this order (a link above, or the list below, opens its "
                     "source):",
     "lines": "{count:,} lines.", "switch": "简体中文"})

CHINESE = Edition(
    "zh-CN", "zh_CN", ROOT / "README.zh-CN.md", ROOT / "docs" / "teaching.zh-CN.md",
    ROOT / "notebooks" / "zh-CN",
    re.compile(r"\*（参考解答：\s*`solutions/\w+_solutions\.ipynb`。）\*"),
    re.compile(r"\*\*时长：\*\* *([^。；]+)"),
    re.compile(r"\*\*学习目标\*\*[^\n]*\n((?:(?:\d+\.| ) .*\n?)+)"),
    {"solution": "参考解答 —— 先自己试过再打开", "method": "**方法。**",
     "from": "取自 `solutions/{stem}.py`，唯一的事实来源；`make sync` 会运行它，"
             "并确认它能通过上面的检查。",
     "folded": "*（参考解答：折叠在检查下方。）*",
     "unpublished": "*（本网站不发布参考解答。）*",
     "done-in": "*（练习在 {lesson} 中完成。）*",
     "report": "# 基准报告\n\n*本页显示的是 `docs/report.html` 显示的内容"
               "（由 `make report` 生成）：笔记本 10 的文字和输出，不含代码。"
               "带代码的笔记本：{lesson}。*",
     "lessons": "各课", "reference": "参考",
     "lessons-title": "# 各课：学习目标与时长\n",
     "lessons-intro": "{count} 个笔记本，按学习顺序排列。每个笔记本都说明学完后你能做什么、"
                      "需要多长时间；时长取自笔记本本身。每个笔记本都以一个练习{folded}"
                      "和复习题结尾。\n",
     "lessons-folded": "（参考解答折叠在检查下方）",
     "lesson": "## [{title}](notebooks/{name})\n\n**时长：** {time}。学完后你能够：\n\n{goals}\n",
     "library-title": "# 库 `course_lib`：阅读指南\n",
     "library-list": "所有模块按以下顺序排列（点击上面的链接或下面列表中的条目，即可打开"
                     "其源代码）：",
     "lines": "{count:,} 行。", "switch": "English"})
EDITIONS = (ENGLISH, CHINESE)


# --- what a lesson says about itself ---------------------------------------------------------
def lesson_summary(notebook: Path, edition: Edition = ENGLISH) -> dict[str, str]:
    """Title, time and learning goals, as the notebook's first cell states them.

    >>> summary = lesson_summary(ROOT / "notebooks" / "07_similarity_thresholds.ipynb")
    >>> summary["title"], summary["time"]
    ('07 · Similarity thresholds', 'about 50 minutes')
    >>> summary["goals"].splitlines()[0][:60]
    '1. explain what a similarity cut-off does to recall and to c'
    """
    first = nbformat.read(notebook, as_version=4).cells[0]
    text = first.source if first.cell_type == "markdown" else ""
    title = re.match(r"# (.+)", text)
    time_ = edition.time.search(text)
    goals = edition.goals.search(text)
    if not (title and time_ and goals):
        raise ValueError(f"{notebook.name}: its first cell must hold a '# title', a time "
                         f"({edition.time.pattern}) and numbered learning goals "
                         f"({edition.goals.pattern.split('[')[0]})")
    return {"title": title.group(1).strip(), "time": " ".join(time_.group(1).split()),
            "goals": goals.group(1).rstrip()}


def notebooks(edition: Edition = ENGLISH) -> list[Path]:
    found = sorted(edition.notebooks.glob("[0-9][0-9]_*.ipynb"))
    if not found:
        raise FileNotFoundError(f"no notebooks in {edition.notebooks}")
    return found


# --- the pages -------------------------------------------------------------------------------
def _fence(text: str, at_least: int = 3) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(at_least, longest + 1)


def worked_solution(notebook: Path) -> list[str]:
    """The worked solution's cells as a reader should see them: the solution and the cells that
    read its result — not ``mistakes()``, the wrong methods the check recognises."""
    _, cells = solution_cells(ROOT / "solutions" / f"{notebook.stem}.py")
    return [cell for cell in cells if "def mistakes(" not in cell]


def solution_block(notebook: Path, edition: Edition = ENGLISH) -> str:
    """The folded worked solution of a notebook's exercise (MyST, sphinx-design's dropdown):
    the method in the edition's language, the code as it is."""
    exercise = notebook.name[:2]
    how = method(exercise, solution_in(exercise, edition.language))
    code = "\n\n".join(f"{_fence(cell)}python\n{cell}\n{_fence(cell)}"
                       for cell in worked_solution(notebook))
    words = edition.words
    body = (f"{words['method']} {how}\n\n" if how else "") + f"{code}\n\n" + \
        words["from"].format(stem=notebook.stem)
    fence = _fence(body, at_least=4)
    return (f"{fence}{{dropdown}} {words['solution']}\n"
            f":class-container: worked-solution\n\n{body}\n{fence}")


def _describe_pictures(notebook: nbformat.NotebookNode) -> None:
    """Give each picture the sentence the course prints beside it ("Picture: ...", its
    text/plain) as its alt text, for screen readers and for a picture that cannot load."""
    for cell in notebook.cells:
        pictures = [output["data"] for output in cell.get("outputs", [])
                    if "image/png" in output.get("data", {})]
        # myst-nb gives every picture of a cell the same options: describe lone pictures only.
        if len(pictures) == 1 and "text/plain" in pictures[0]:
            options = cell.metadata.setdefault("mystnb", {}).setdefault("image", {})
            options["alt"] = pictures[0]["text/plain"]


def lesson_notebook(notebook: Path, solutions: bool = True,
                    edition: Edition = ENGLISH) -> nbformat.NotebookNode:
    """The notebook as the site shows it: committed outputs (each picture described by its alt
    text), the worked solution folded after the exercise's check (``solutions=False``: none,
    for a class whose exercises are graded), no saved widget state (a static page cannot run a
    widget)."""
    lesson = nbformat.read(notebook, as_version=4)
    lesson.metadata.pop("widgets", None)
    _describe_pictures(lesson)
    checks = [i for i, cell in enumerate(lesson.cells)
              if cell.cell_type == "code" and CHECK_CALL.search(cell.source)]
    if len(checks) != 1:
        raise ValueError(f"{notebook.name}: expected one exercise check cell, found {len(checks)}")
    if solutions:
        # A fixed cell id: the staged file is the same on every run (an incremental build).
        block = nbformat.v4.new_markdown_cell(solution_block(notebook, edition),
                                              id="worked-solution")
        lesson.cells.insert(checks[0] + 1, block)
    pointer = edition.words["folded" if solutions else "unpublished"]
    for cell in lesson.cells:  # the exercise's pointer to the solution notebook, for the site
        if cell.cell_type == "markdown":
            cell.source = edition.solution_pointer.sub(pointer, cell.source)
    return lesson


def report_notebook(notebook: Path, edition: Edition = ENGLISH) -> nbformat.NotebookNode:
    """``docs/report.html``'s content (``make report``: notebook 10 exported without its code)."""
    report = nbformat.read(notebook, as_version=4)
    report.metadata.pop("widgets", None)
    _describe_pictures(report)
    title = report.cells[0].source.splitlines()[0]
    lesson = f"[{title.removeprefix('# ')}](notebooks/{notebook.name})"
    for cell in report.cells:
        if cell.cell_type == "code":
            # The exercise's check cell says "run this cell again": no use on a page without code.
            shown = cell.get("outputs") and not CHECK_CALL.search(cell.source)
            cell.metadata.setdefault("tags", []).append("remove-input" if shown else
                                                        "remove-cell")
        else:
            cell.source = edition.solution_pointer.sub(
                edition.words["done-in"].format(lesson=lesson), cell.source)
    report.cells[0].source = report.cells[0].source.replace(
        title, edition.words["report"].format(lesson=lesson), 1)
    return report


def landing_page(edition: Edition = ENGLISH) -> str:
    """The README, its notebook table's names linked to the lessons, and the site's contents.
    Its links to the other edition's README and guide are the language switch's job: they
    lead to this edition's pages."""
    readme = edition.readme.read_text(encoding="utf-8")
    for notebook in notebooks(edition):
        readme = readme.replace(f"| `{notebook.stem}` |",
                                f"| [{notebook.stem}](notebooks/{notebook.name}) |")
    for other in EDITIONS:
        readme = readme.replace(f"]({other.readme.name})", "](index.md)").replace(
            f"]({other.teaching.relative_to(ROOT).as_posix()})", "](docs/teaching.md)")
    lessons = "\n".join(f"notebooks/{notebook.stem}" for notebook in notebooks(edition))
    words = edition.words
    return (readme.rstrip() + f"\n\n```{{toctree}}\n:hidden:\n:caption: {words['lessons']}\n\n"
            f"lessons\n{lessons}\n```\n\n```{{toctree}}\n:hidden:\n:caption: "
            f"{words['reference']}\n\nlibrary\ndocs/teaching\nreport\n```\n")


def lessons_page(solutions: bool = True, edition: Edition = ENGLISH) -> str:
    words = edition.words
    parts = [words["lessons-title"], words["lessons-intro"].format(
        count=len(notebooks(edition)), folded=words["lessons-folded"] if solutions else "")]
    for notebook in notebooks(edition):
        summary = lesson_summary(notebook, edition)
        parts.append(words["lesson"].format(name=notebook.name, **summary))
    return "\n".join(parts)


def library_modules() -> list[Path]:
    """Every module of ``course_lib``, in reading order: the package, the reading path, the
    other ideas, then ``lab/``, ``store/``, ``_support/`` in the README's order."""
    package = ROOT / "course_lib"
    order = [package / "__init__.py"] + [package / f"{name}.py"
                                         for name in (*READING_PATH, *MORE_IDEAS)]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for part in ("lab", "store", "_support"):
        section = readme.split(f"(`course_lib/{part}/`", 1)[1].split("\n\n**", 1)[0]
        named = [_row_modules(line) for line in section.splitlines() if line.startswith("| `")]
        order += [package / part / name for name in dict.fromkeys(sum(named, []))]
    everything = sorted(package.rglob("*.py"))
    order += [path for path in everything if path not in order]
    missing = [path for path in order if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"the README names modules that do not exist: {missing}")
    return order


def _row_modules(row: str) -> list[str]:
    """The modules a README table row names in its first cell, as paths below its part:
    ``| `data/` `squad.py`, `datasets.py` | ...`` → ``["data/squad.py", "data/datasets.py"]``
    (a lab row starts with its room)."""
    first = row[2:].split(" |", 1)[0]
    room = re.match(r"`(\w+)/`", first)
    return [(room.group(1) + "/" if room else "") + name
            for name in re.findall(r"`(\w+\.py)`", first)]


def _module_page(path: Path, edition: Edition = ENGLISH) -> str:
    relative = path.relative_to(ROOT).as_posix()
    source = path.read_text(encoding="utf-8")
    fence = _fence(source)
    lines = edition.words["lines"].format(count=len(source.splitlines()))
    return f"# `{relative}`\n\n{lines}\n\n{fence}python\n{source.rstrip()}\n{fence}\n"


def _page_name(path: Path) -> str:
    """``course_lib/lab/cli.py`` → ``library/lab/cli.py`` (the page ``library/lab/cli.py.html``;
    a page named after the module alone would make ``index.py`` the folder's index page)."""
    return "library/" + path.relative_to(ROOT / "course_lib").as_posix()


def library_page(modules: list[Path], edition: Edition = ENGLISH) -> str:
    """The README's section on the library, each module in its tables linked to its source."""
    readme = edition.readme.read_text(encoding="utf-8")
    section = re.split(r"\n## [^\n]*`course_lib`[^\n]*\n", readme, maxsplit=1)[1]
    section = section.split("\n## ", 1)[0]
    pages = {path.relative_to(ROOT / "course_lib").as_posix(): _page_name(path)
             for path in modules}
    lines, part = [], ""
    for line in section.splitlines():
        found = re.search(r"[(（]`course_lib/(\w+)/`", line)
        if line.startswith("**") and found:
            part = found.group(1) + "/"
        elif line.startswith("**") and "`course_lib/`" in line:  # the ideas
            part = ""
        if line.startswith("| `"):
            first, rest = line[2:].split(" |", 1)
            room = re.match(r"`(\w+)/`", first)
            where = part + (room.group(1) + "/" if room else "")
            first = re.sub(r"`(\w+\.py)`", lambda m, where=where:
                           f"[`{m.group(1)}`]({pages[where + m.group(1)]}.md)", first)
            line = f"| {first} |{rest}"
        lines.append(line)
    toctree = "\n".join(_page_name(path) for path in modules)
    return (edition.words["library-title"] + "\n".join(lines).rstrip() + "\n\n" +
            edition.words["library-list"] + "\n\n```{toctree}\n:maxdepth: 1\n\n" + toctree +
            "\n```\n")


def staged_files(solutions: bool = True, edition: Edition = ENGLISH) -> dict[str, str]:
    """Every source file of the site in ``edition``: its path under the staging folder → its
    content. Both editions stage the same paths."""
    files = {"index.md": landing_page(edition), "lessons.md": lessons_page(solutions, edition),
             "docs/teaching.md": edition.teaching.read_text(encoding="utf-8")}
    for notebook in notebooks(edition):
        files[f"notebooks/{notebook.name}"] = nbformat.writes(
            lesson_notebook(notebook, solutions, edition))
    files["report.ipynb"] = nbformat.writes(
        report_notebook(edition.notebooks / "10_benchmark_report.ipynb", edition))
    modules = library_modules()
    files["library.md"] = library_page(modules, edition)
    for path in modules:
        files[_page_name(path) + ".md"] = _module_page(path, edition)
    return files


# --- staging, building, checking -------------------------------------------------------------
def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, text)


def _inside(folder: Path, name: str) -> Path | None:
    """``folder / name`` if that stays inside ``folder``, else ``None`` (a manifest is data)."""
    path = (folder / name).resolve()
    return path if path.is_relative_to(folder.resolve()) and path != folder.resolve() else None


def stage(src: Path, solutions: bool = True,
          edition: Edition = ENGLISH) -> tuple[int, list[str]]:
    """Write the site's sources in ``edition`` into ``src``: (how many files changed, the
    names removed). Files staged by an earlier run (its manifest) and no longer wanted are
    removed; nothing else in ``src`` is touched."""
    files = staged_files(solutions, edition)
    manifest = src / MANIFEST
    earlier = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else []
    changed = 0
    for name, text in files.items():
        path = src / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            _write(path, text)
            changed += 1
    removed = []
    for name in sorted(set(earlier) - set(files)):
        path = _inside(src, name) if isinstance(name, str) else None
        if path is not None and path.is_file():
            path.unlink()
            removed.append(name)
    _write(manifest, json.dumps(sorted(files), indent=1))
    return changed + len(removed), removed


def _folders(out: Path, edition: Edition) -> tuple[Path, Path, Path]:
    """(staging, doctrees, html) of ``edition``: the English site in ``out/html``, the Chinese
    one in ``out/html/zh-CN`` — the language switch links a page to its namesake there."""
    if edition is ENGLISH:
        return out / "src", out / "doctrees", out / "html"
    name = edition.language
    return out / f"src-{name}", out / f"doctrees-{name}", out / "html" / name


def _sphinx(out: Path, edition: Edition, solutions: bool) -> int:
    """Stage ``edition``'s pages and build them with Sphinx (warnings are errors)."""
    src, doctrees, html = _folders(out, edition)
    changed, removed = stage(src, solutions, edition)
    print(f"staged {changed} changed file(s) into {src}")
    for name in removed:  # Sphinx keeps the page of a source that is gone: remove it too
        page = _inside(html, str(Path(name).with_suffix(".html")))
        if page is not None and page.is_file():
            page.unlink()
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
               "-c", str(ROOT / "site"), "-d", str(doctrees), "-D",
               f"language={edition.sphinx}", str(src), str(html)]
    result = subprocess.run(command, cwd=ROOT, check=False)
    if result.returncode:
        print(f"sphinx-build failed on the {edition.language} pages (exit {result.returncode}): "
              "the warnings above are errors", file=sys.stderr)
    return result.returncode


def build(out: Path, solutions: bool = True) -> int:
    """Stage and build both editions (``out/html``, ``out/html/zh-CN``), check the links."""
    started = time.perf_counter()
    for edition in EDITIONS:
        failed = _sphinx(out, edition, solutions)
        if failed:
            return failed
    report = check_site(out / "html")
    for line in report.broken:
        print(f"broken link: {line}", file=sys.stderr)
    _write(out / "external-links.txt", "".join(f"{url}\n" for url in report.external))
    print(f"{report.pages} pages: {report.internal} internal links checked (file and anchor), "
          f"{len(report.broken)} broken; {len(report.external)} external links listed in "
          f"{out / 'external-links.txt'} (not fetched)")
    print(f"site: {out / 'html' / 'index.html'}, in Chinese {out / 'html' / 'zh-CN'}"
          f"  ({time.perf_counter() - started:.1f} s)")
    return 1 if report.broken else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "site",
                        help="folder for src/, html/ and doctrees/ (default: _build/site)")
    parser.add_argument("--no-solutions", action="store_true",
                        help="leave the worked solutions out (a class whose exercises are graded)")
    args = parser.parse_args(argv)
    return build(args.out.resolve(), solutions=not args.no_solutions)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
