"""Every decimal number in a notebook's text comes from its code.

A decimal quoted in a markdown cell must be among the numbers that notebook's outputs
show (at the precision quoted: "0.98" is backed by an output "0.9812", "98.1 %" by
"0.981"), or be a literal the reader sees in its code (a parameter such as 0.3), or be in
the commented allow-list below. Run as a script to list the unbacked numbers:

    python tests/test_notebook_claims.py notebooks/07_similarity_thresholds.ipynb
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
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


if __name__ == "__main__":
    for name in sys.argv[1:] or [str(p) for p in NOTEBOOKS]:
        print(Path(name).name, unbacked_numbers(Path(name)))
