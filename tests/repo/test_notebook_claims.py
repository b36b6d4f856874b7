"""Every decimal number in a notebook's text comes from its code.

A decimal quoted in a markdown cell must be among the numbers that notebook's outputs
show (at the precision quoted: "0.98" is backed by an output "0.9812", "98.1 %" by
"0.981"), or be a literal the reader sees in its code (a parameter such as 0.3), or be in
the commented allow-list below. Run as a script to list the unbacked numbers:

    python tests/repo/test_notebook_claims.py notebooks/07_similarity_thresholds.ipynb
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# The Chinese notebooks (tools/translations.py): their prose is checked as the English is.
TRANSLATED = sorted((ROOT / "notebooks" / "zh-CN").glob("[0-9][0-9]_*.ipynb"))
BOTH = NOTEBOOKS + TRANSLATED


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}" if path in TRANSLATED else path.stem
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")

# Numbers a notebook may quote without computing them, and why.
ALLOWED = {
    # The chapter's published results (LazyLLM RAG course ch. 7, CMRC 2018 trial):
    # recall / context relevance at top 1/3/5 for chunks, summaries, paragraphs, cosine,
    # the cut-off row, and MRR without and with bge-reranker-large.
    "0.43", "0.47", "0.48", "0.50", "0.20", "0.12", "0.83", "0.89", "0.90", "0.76", "0.29",
    "0.17", "0.93", "0.94", "0.97", "0.98", "0.86", "0.30", "0.18", "0.92", "0.95", "0.84",
    "0.88", "0.87", "0.9411", "0.9704", "0.9741", "0.6132", "0.4468",
    # The chapter's parameters: its cosine cut-off and the edit-similarity hit rule.
    "0.4", "0.5",
    # The course's significance level (significance.verdict's alpha): a convention, not a result.
    "0.05",
    # Facts about things outside the course: the licence CC BY-SA 4.0, bge-large-zh's 1.3 GB.
    "4.0", "1.3",
}


def _texts(output: dict) -> list[str]:
    texts = ["".join(output["text"])] if "text" in output else []
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime.endswith("json"):
            texts.append("".join(value) if isinstance(value, list) else json.dumps(value))
    return texts


def _decimals(number: str) -> int:
    return len(number.split(".")[1])


def _backs(shown: str, quoted: str) -> bool:
    """Does the number ``shown`` in an output back the ``quoted`` one (same value at the
    quoted precision, as a fraction or as a percentage)?"""
    places = _decimals(quoted)
    if _decimals(shown) < places:
        return False
    value, target = float(shown), float(quoted)
    return any(abs(round(v, places) - target) < 10 ** -(places + 3)
               for v in (value, 100 * value))


def unbacked_numbers(path: Path) -> list[str]:
    """The decimals of ``path``'s markdown that none of its outputs or code literals back."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    shown = {n for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])
             for text in _texts(o) for n in NUMBER.findall(text)}
    literals = {n for c in cells if c["cell_type"] == "code"
                for n in NUMBER.findall("".join(c["source"]))}
    missing = []
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        for quoted in NUMBER.findall("".join(cell["source"])):
            if quoted in ALLOWED or quoted in literals or quoted in missing:
                continue
            if not any(_backs(s, quoted) for s in shown):
                missing.append(quoted)
    return missing


@pytest.mark.parametrize("path", BOTH, ids=_id)
def test_markdown_numbers_come_from_outputs(path):
    assert unbacked_numbers(path) == [], (
        f"{path.name}: these numbers in the text appear in no output: print them, render the "
        f"sentence from the computed value, or (a chapter figure) add them to ALLOWED")


def test_the_scan_catches_a_number_no_output_shows(tmp_path):
    notebook = {"cells": [
        {"cell_type": "markdown", "source": ["recall rises to 0.97 and then 0.912, MRR 98.1 %"]},
        {"cell_type": "code", "source": ["print(x)"],
         "outputs": [{"output_type": "stream", "text": ["0.9812 0.9114\n"]}]}]}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    # 0.97 is a chapter figure, 98.1 % is 0.9812 as a percentage; 0.912 is shown nowhere.
    assert unbacked_numbers(path) == ["0.912"]


# ---------------------------------------------------------------- verdicts read from a table
# A win/loss table (course_lib.lab.measure.wins.format_win_loss) ends with this footer; its rows
# end with a verdict. The markdown after such a table, up to the next code cell, reads it:
# each sentence there that says "wins", "loses" or "no detectable difference" must quote a
# signed difference of a row whose verdict is the same — and none of a row whose verdict
# differs.
TABLE_FOOTER = "verdict from p_holm"
# The Chinese prose says the same verdicts with the glossary's words (i18n/zh-CN/glossary.yaml).
VERDICT = re.compile(r"\b(wins|win|loses|lose|no detectable difference)\b"
                     r"|(胜出|落后|无可检测的差异)")
SIGNED = re.compile(r"(?<![\w.])[+\-−]\d+\.\d+")
_CANONICAL = {"win": "wins", "wins": "wins", "lose": "loses", "loses": "loses",
              "no detectable difference": "no detectable difference", "胜出": "wins",
              "落后": "loses", "无可检测的差异": "no detectable difference"}


def _rows(text: str) -> list[tuple[str, str]]:
    """(signed difference, verdict) of each row of the win/loss tables in ``text``."""
    rows = []
    for line in text.splitlines():
        found = re.search(r"([+\-]\d+\.\d+) \[[+\-]\d+\.\d+, [+\-]\d+\.\d+\].*?"
                          r"(wins|loses|no detectable difference)$", line.rstrip())
        if found:
            rows.append((found.group(1), found.group(2)))
    return rows


def _sentences(markdown: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;:])\s+|(?<=[。！？；：])|\n\s*[*\-] |\n\n", markdown)
            if s.strip()]


def verdict_mismatches(path: Path) -> list[str]:
    """Sentences after a win/loss table whose verdict the table does not back."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    problems, rows = [], []
    for cell in cells:
        if cell["cell_type"] == "code":
            text = "".join(t for o in cell.get("outputs", []) for t in _texts(o))
            rows = _rows(text) if TABLE_FOOTER in text else []
            continue
        if not rows:
            continue
        for sentence in _sentences("".join(cell["source"])):
            said = {_CANONICAL[english or chinese]
                    for english, chinese in VERDICT.findall(sentence)}
            numbers = [n.replace("−", "-") for n in SIGNED.findall(sentence)]
            if not said or not numbers:
                continue
            for number in numbers:
                verdicts = {v for d, v in rows if d == number}
                if verdicts and not verdicts & said:
                    problems.append(f"{number} is {sorted(verdicts)} in the table, the text "
                                    f"says {sorted(said)}: {sentence.strip()[:120]}")
            if not any(d in numbers and v in said for d, v in rows):
                problems.append(f"no row of the table above has {numbers} with "
                                f"{sorted(said)}: {sentence.strip()[:120]}")
    return problems


@pytest.mark.parametrize("path", BOTH, ids=_id)
def test_verdicts_in_the_text_are_the_tables(path):
    assert verdict_mismatches(path) == []


def test_the_verdict_check_catches_a_win_the_table_does_not_support(tmp_path):
    table = ("setting  technique vs baseline  metric  baseline  technique  difference\n"
             "x  a vs b  recall@1  0.600  0.900  +0.300 [+0.270, +0.330]  <0.001  <0.001  wins\n"
             "y  a vs b  recall@1  0.960  0.961  +0.001 [-0.002, +0.004]   1.000   1.000  "
             "no detectable difference\n(9 questions) ... verdict from p_holm < 0.05\n")
    def notebook(text):
        path = tmp_path / "nb.ipynb"
        path.write_text(json.dumps({"cells": [
            {"cell_type": "code", "source": [""],
             "outputs": [{"output_type": "stream", "text": [table]}]},
            {"cell_type": "markdown", "source": [text]}]}), encoding="utf-8")
        return path
    assert verdict_mismatches(notebook("Normalising wins (+0.300). On CMRC there is no "
                                       "detectable difference (+0.001).")) == []
    assert len(verdict_mismatches(notebook("On CMRC it wins too (+0.001)."))) == 2
    assert len(verdict_mismatches(notebook("Normalising wins by +0.310."))) == 1
    # The same check on Chinese prose.
    said = "归一化胜出（+0.300）。在 CMRC 上无可检测的差异（+0.001）。"
    assert verdict_mismatches(notebook(said)) == []
    assert len(verdict_mismatches(notebook("在 CMRC 上它也胜出（+0.001）。"))) == 2


if __name__ == "__main__":
    for name in sys.argv[1:] or [str(p) for p in NOTEBOOKS]:
        print(Path(name).name, unbacked_numbers(Path(name)))


# Prose fits the time: read at 100 words a minute, a notebook's markdown takes at most half
# of the minutes its first cell states; the rest is running, trying and the exercise.
WORDS_PER_MINUTE, READING_SHARE = 100, 0.5
# English words and numbers, as the project's before-stop hook counts them (a Chinese example
# inside English prose is read at a glance, not character by character)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d[\d.,]*")


def prose_words(path: Path) -> int:
    """Words and numbers in the notebook's markdown cells."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(len(_WORD.findall("".join(c["source"])))
               for c in cells if c["cell_type"] == "markdown")


def stated_minutes(path: Path) -> int:
    first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    found = re.search(r"\*\*Time:\*\* about (\d+) minutes", first)
    assert found, f"{path.name}: the first cell states no '**Time:** about N minutes'"
    return int(found.group(1))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_fits_half_the_stated_time(path):
    words, minutes = prose_words(path), stated_minutes(path)
    budget = int(WORDS_PER_MINUTE * READING_SHARE * minutes)
    assert words <= budget, (f"{path.name}: {words} words of prose, {words / WORDS_PER_MINUTE:.0f} "
                             f"minutes of reading, over half of its {minutes} minutes ({budget} "
                             "words): split the notebook, or state the time it takes")


def test_the_prose_budget_catches_a_notebook_over_it(tmp_path):
    title = "# 99 · x\n\n**Time:** about 10 minutes.\n"
    notebook = {"cells": [{"cell_type": "markdown", "source": [title]},
                          {"cell_type": "markdown", "source": ["word " * 500]}]}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    with pytest.raises(AssertionError, match="over half of its 10 minutes"):
        test_prose_fits_half_the_stated_time(path)


# A p-value printed as zero ("p 0.000", "p_holm 0.0000", "Holm 0.00") claims certainty no
# finite test gives: the course prints "<0.001" (or "<0.0001") instead (notebook 01's policy).
ZERO_P = re.compile(r"\b(?:p|p_holm|Holm)\s*(?:=\s*)?0\.0+(?![\d.])")


def zero_p_values(path: Path) -> list[str]:
    """Every output line of ``path`` that prints a p-value as zero."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [line.strip() for cell in notebook["cells"] if cell["cell_type"] == "code"
            for output in cell.get("outputs", []) for text in _texts(output)
            for line in text.splitlines() if ZERO_P.search(line)]


@pytest.mark.parametrize("path", BOTH, ids=_id)
def test_no_p_value_is_printed_as_zero(path):
    assert not zero_p_values(path), f"{path.name} prints p as 0: {zero_p_values(path)[:3]}"


def test_the_zero_p_scan_catches_one(tmp_path):
    line = "trial  both cut − e5 alone > 0.88    recall@5  +0.1050  p_holm 0.0000\n"
    notebook = {"cells": [{"cell_type": "code", "source": [],
                           "outputs": [{"output_type": "stream", "text": [line]}]}]}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert zero_p_values(path) == [line.strip()]
    path.write_text(json.dumps(notebook).replace("0.0000", "<0.0001"), encoding="utf-8")
    assert zero_p_values(path) == []
