"""One multiple-testing policy (notebook 01, section 7): the README and the notebooks
agree on every starred cell and every verdict they both show.

The README quotes tables that notebook 10 prints (the chapter's tables, the held-out
table, the claims on trial and dev, the wins on the report half). Each README row that
ends in a star, a p in parentheses or a verdict is looked up in notebook 10's committed
outputs: a row of the same table must be there, with the same star or verdict.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "10_benchmark_report.ipynb"
CLAIMS_MARK = "<!-- claims: the output of notebooks/10_benchmark_report.ipynb, cell b5b7f38f -->"
VERDICTS = ("no detectable difference", "wins", "loses", "higher", "lower")
_STARRED = re.compile(r"^(?P<label>\S.*?)\s{2,}.*\((?P<p>p [<0-9.]+)\)(?P<star>\*?)\s*$")
_VERDICT = re.compile(r"^\s*(?P<label>\S.*?)\s{2,}.*\s(?P<verdict>" + "|".join(VERDICTS) + r")\s*$")


def _outputs(path: Path = NOTEBOOK) -> dict[str, str]:
    """Each code cell's printed text, by cell id."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {cell["id"]: "".join("".join(out.get("text", "")) for out in cell.get("outputs", []))
            for cell in cells if cell["cell_type"] == "code"}


def _readme_code_lines(text: str) -> list[str]:
    """The lines of the README's fenced blocks (where its tables are)."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line.rstrip())
    return lines


def _marks(lines: list[str]) -> dict[str, str]:
    """Each row that carries a star or a verdict → that mark. A row is keyed by its text
    without the mark (the same label and numbers), except a wins row (it starts with its
    lesson, "02 rewriting"), keyed by lesson, setting, pair and metric: notebook 10 shows
    no choose column and its own Holm p."""
    marks: dict[str, str] = {}
    for line in lines:
        starred, verdict = _STARRED.match(line), _VERDICT.match(line)
        if starred:
            marks[line[:starred.start("p")].rstrip("( ")] = starred["p"] + starred["star"]
        elif verdict and re.match(r"\d\d [a-z]", line):
            marks[re.split(r"\s+[+-]?\d|\s+–\s", line, maxsplit=1)[0]] = verdict["verdict"]
        elif verdict:
            marks[line[:verdict.start("verdict")].rstrip()] = verdict["verdict"]
    return marks


def disagreements(readme: str, outputs: dict[str, str]) -> list[str]:
    """README rows whose star or verdict differs from notebook 10's row of the same label."""
    notebook_lines = [line.rstrip() for text in outputs.values() for line in text.splitlines()]
    ours, theirs = _marks(_readme_code_lines(readme)), _marks(notebook_lines)
    problems = [f"{row!r}: README {mark!r}, notebook 10 {theirs[row]!r}"
                for row, mark in ours.items() if row in theirs and theirs[row] != mark]
    return problems


def test_readme_and_notebook_10_agree_on_every_star_and_verdict():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    outputs = _outputs()
    assert not disagreements(readme, outputs), disagreements(readme, outputs)
    shared = set(_marks(_readme_code_lines(readme))) & set(
        _marks([line for text in outputs.values() for line in text.splitlines()]))
    assert len(shared) >= 45, f"only {len(shared)} rows found in both: did a table's format change?"


def test_the_readme_quotes_notebook_10s_claims_as_printed():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert CLAIMS_MARK in readme, "the README lost the marker before the claims block"
    block = readme.split(CLAIMS_MARK, 1)[1].split("```", 2)[1].strip("\n")
    printed = re.sub(r"\n{3,}", "\n\n", _outputs()["b5b7f38f"]).strip("\n")
    assert block == printed, "README's claims differ from notebook 10's output: copy it again"


def test_a_star_the_notebook_does_not_give_is_caught():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in _readme_code_lines(readme)
               if line.startswith("hybrid: words + characters + cosine, RRF")
               and line.endswith("(p 0.327)"))
    broken = readme.replace(row, row + "*")
    assert any("hybrid" in problem for problem in disagreements(broken, _outputs()))


def test_a_verdict_the_notebook_does_not_give_is_caught():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in _readme_code_lines(readme)
               if line.startswith("02 rewriting       CMRC")
               and line.endswith("no detectable difference"))
    broken = readme.replace(row, row.replace("no detectable difference", "wins"))
    assert any("02 rewriting" in problem for problem in disagreements(broken, _outputs()))


# ---- the README's wins table against every notebook's own win/loss tables
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
_WIN = r"(wins|loses|no detectable difference)$"
_SPAN = r"([+\-]\d\.\d{3} \[[+\-]\d\.\d{3}, [+\-]\d\.\d{3}\])"
_README_WIN = re.compile(r"^(\d\d) [a-z\- ]+?\s{2,}.*?(\d\.\d{3})→(\d\.\d{3}), " + _SPAN
                         + r"\s+\S+\s+" + _WIN)
_NOTEBOOK_WIN = re.compile(r"(\d\.\d{3})\s+(\d\.\d{3})\s+" + _SPAN + r"\s+\S+\s+\S+\s+" + _WIN)
# The same comparison may be corrected in a smaller family in a notebook's own table (notebook
# 01's policy: a family is one table on one question set). Each such row is listed here, and
# its notebook must say in its text which verdict is the course's.
OTHER_FAMILY = {("06", ("0.918", "0.930", "+0.012 [+0.001, +0.023]")):
                "the course's verdict is `make reproduce`'s"}


def wins_disagreements(readme: str, notebooks: dict[str, str]) -> tuple[list[str], int]:
    """README wins rows whose verdict differs from a notebook row with the same baseline,
    technique and difference (the same comparison on the same questions), and how many
    README rows some notebook shows. ``notebooks``: name → the notebook file's text."""
    ours = {match.groups()[1:4]: match[5] for line in _readme_code_lines(readme)
            if (match := _README_WIN.match(line))}
    problems, shown = [], set()
    for name, text in notebooks.items():
        cells = json.loads(text)["cells"]
        printed = "\n".join("".join(out.get("text", "")) for cell in cells
                            for out in cell.get("outputs", []))
        prose = "\n".join("".join(cell["source"]) for cell in cells
                          if cell["cell_type"] == "markdown")
        for line in printed.splitlines():
            match = _NOTEBOOK_WIN.search(line.rstrip())
            if not match or match.groups()[:3] not in ours:
                continue
            key = match.groups()[:3]
            shown.add(key)
            if match[4] != ours[key]:
                said = OTHER_FAMILY.get((name[:2], key))
                if not said or said not in " ".join(prose.split()):
                    problems.append(f"{name}: {key} is {match[4]!r}, the README's wins table "
                                    f"says {ours[key]!r}")
    return problems, len(shown)


def _notebook_texts() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in NOTEBOOKS}


def test_the_readme_wins_table_and_the_notebooks_agree_on_each_comparison():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    problems, shown = wins_disagreements(readme, _notebook_texts())
    assert not problems, problems
    assert shown >= 9, f"only {shown} README wins rows found in notebooks: did a format change?"


def test_a_notebook_verdict_that_differs_from_the_readme_unsaid_is_caught():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    texts = _notebook_texts()
    name = next(n for n in texts if n.startswith("06_"))
    texts[name] = texts[name].replace("the course's verdict is `make reproduce`'s", "")
    problems, _ = wins_disagreements(readme, texts)
    assert any(problem.startswith(name) for problem in problems)
