"""The Chinese notebooks: built from the English ones and their translations, never by hand.

One source, two languages. A Chinese notebook holds exactly the English notebook's cells, in
order, with their ids, its code cells and their committed outputs copied byte for byte (never
executed a second time); only the markdown is translated. The layout:

    i18n/zh-CN/glossary.yaml       the course's terms, one translation each
    i18n/zh-CN/NN_name.yaml        per notebook: each markdown cell's translation, keyed by the
                                   English cell's id, with the hash of the English text it
                                   translates (``en:``)
    notebooks/zh-CN/NN_name.ipynb  built here

    python tools/translations.py           # build notebooks/zh-CN/ from what i18n/ holds
    python tools/translations.py --check   # exit 1, each problem naming its notebook and cell

A problem is: an English markdown cell changed since its translation (its hash differs from
``en:``), has none, or is gone while its translation stays; a built notebook that is not what
this tool builds (a copied cell or output differs, or it was edited); a number of the English
cell missing from its translation, or one added; a glossary term of the English cell whose
Chinese term the translation lacks, or a rendering the glossary avoids; a character that is
not Simplified (OpenCC's t2s changes it; Traditional text the English quotes may stay).
tests/repo/test_translations.py runs the check in ``make test``. Which notebooks are translated
so far: those with a file in i18n/zh-CN/; the rest are listed, not built.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = "zh-CN"
SOURCES = ROOT / "i18n" / LANGUAGE
BUILT = ROOT / "notebooks" / LANGUAGE
ENGLISH = ROOT / "notebooks"
# A number as the text writes it: digits, thousands commas, a decimal part. Chinese text keeps
# the English digits (no 二十六 for 26), so the two cells hold the same numbers.
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def english_hash(source: str) -> str:
    """What a translation records of the English cell it translates: 12 hex digits of SHA-256."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def numbers(text: str) -> Counter[str]:
    """The numbers ``text`` writes, commas dropped: ``numbers("1,002 个问题，第 3 节")`` →
    ``Counter({"1002": 1, "3": 1})``."""
    return Counter(match.replace(",", "").rstrip(".,") for match in NUMBER.findall(text))


def shown(path: Path) -> str:
    """``path`` as a message names it: from the repository's root when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def english_notebooks() -> list[Path]:
    return sorted(ENGLISH.glob("[0-9][0-9]_*.ipynb"))


def translation_file(notebook: Path, sources: Path = SOURCES) -> Path:
    return sources / f"{notebook.stem}.yaml"


def read_notebook(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def notebook_text(notebook: dict[str, Any]) -> str:
    """How the course stores a notebook: one-space indents, UTF-8 as is, a final newline."""
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def read_translation(path: Path) -> dict[str, dict[str, str]]:
    """``{cell id: {"en": hash, "zh": text}}`` from a translation file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise ValueError(f"{shown(path)}: needs a list 'cells' of "
                         "{id, en, zh} entries")
    found: dict[str, dict[str, str]] = {}
    for i, entry in enumerate(cells):
        if not isinstance(entry, dict) or set(entry) != {"id", "en", "zh"}:
            got = sorted(entry) if isinstance(entry, dict) else entry
            raise ValueError(f"{shown(path)}: cells[{i}] must have exactly the keys "
                             f"id, en, zh; got {got!r}")
        if entry["id"] in found:
            raise ValueError(f"{shown(path)}: cell {entry['id']} is translated twice")
        found[str(entry["id"])] = {"en": str(entry["en"]), "zh": str(entry["zh"]).rstrip("\n")}
    return found


def build(notebook: Path, translation: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The Chinese notebook of the English ``notebook``: its cells with each markdown cell's
    source replaced by its translation (a cell without one keeps its English, which the check
    reports); code cells and outputs as they are."""
    built = read_notebook(notebook)
    for cell in built["cells"]:
        if cell["cell_type"] == "markdown" and cell.get("id") in translation:
            cell["source"] = translation[cell["id"]]["zh"].splitlines(keepends=True)
    built["metadata"]["course_translation"] = {"language": LANGUAGE,
                                               "english": f"../{notebook.name}"}
    return built


def glossary(sources: Path = SOURCES) -> dict[str, dict[str, Any]]:
    return yaml.safe_load((sources / "glossary.yaml").read_text(encoding="utf-8"))


def problems(notebook: Path, sources: Path = SOURCES, built_folder: Path = BUILT) -> list[str]:
    """Everything wrong with ``notebook``'s translation, each naming the notebook and cell."""
    from course_lib.scripts import to_simplified

    name = notebook.stem
    english = read_notebook(notebook)
    translation = read_translation(translation_file(notebook, sources))
    found = []
    markdown = {cell["id"]: "".join(cell["source"]) for cell in english["cells"]
                if cell["cell_type"] == "markdown"}
    terms = glossary(sources)
    avoid = {word: term for term, entry in terms.items() for word in entry.get("avoid", [])}
    for cell_id, source in markdown.items():
        if cell_id not in translation:
            found.append(f"{name}: markdown cell {cell_id} has no translation")
            continue
        entry = translation[cell_id]
        if entry["en"] != english_hash(source):
            found.append(f"{name}: markdown cell {cell_id} changed in English since it was "
                         f"translated (hash now {english_hash(source)}, translated from "
                         f"{entry['en']}): translate it again and update en:")
        if numbers(source) != numbers(entry["zh"]):
            lost = sorted((numbers(source) - numbers(entry["zh"])).elements())
            added = sorted((numbers(entry["zh"]) - numbers(source)).elements())
            found.append(f"{name}: markdown cell {cell_id}: the numbers differ from the English "
                         f"(missing {lost}, added {added})")
        plain = re.sub(r"`[^`]*`", "", source).lower()  # code spans keep their English
        # Longest terms first, each match then blanked: "multi-path retrieval" asks for 多路召回,
        # not also for 检索. "recall@5" is a metric's name, kept in English: no 召回率 needed.
        for term in sorted(terms, key=len, reverse=True):
            pattern = rf"\b{re.escape(term)}(?:s|es)?\b(?!@)"
            if re.search(pattern, plain) and terms[term]["zh"] not in entry["zh"]:
                found.append(f"{name}: markdown cell {cell_id} says {term!r} in English but not "
                             f"{terms[term]['zh']!r} in Chinese (the glossary's term)")
            plain = re.sub(pattern, " ", plain)
        for word, term in avoid.items():
            if word in entry["zh"]:
                found.append(f"{name}: markdown cell {cell_id} writes {word!r}: the glossary "
                             f"says {term!r} is {terms[term]['zh']!r}")
        simplified = to_simplified(entry["zh"])
        # Traditional text the English quotes (a DRCD example, 馬祖列島) stays as quoted.
        changed = sorted({a for a, b in zip(entry["zh"], simplified, strict=False) if a != b}
                         - set(source))
        if changed:
            found.append(f"{name}: markdown cell {cell_id} is not Simplified Chinese throughout: "
                         f"{''.join(changed)}")
    for cell_id in translation.keys() - markdown.keys():
        found.append(f"{name}: the translation of cell {cell_id}, which the English notebook no "
                     "longer has as a markdown cell: remove it")
    built = built_folder / notebook.name
    expected = notebook_text(build(notebook, translation))
    if not built.is_file():
        found.append(f"{name}: {shown(built)} is missing: run "
                     "python tools/translations.py")
    elif built.read_text(encoding="utf-8") != expected:
        found.append(f"{name}: {shown(built)} is not what the translation tool builds "
                     "(a copied code cell or output changed, or the file was edited by hand): "
                     "run python tools/translations.py")
    return found


def translated(sources: Path = SOURCES) -> list[Path]:
    """The English notebooks that have a translation file."""
    return [nb for nb in english_notebooks() if translation_file(nb, sources).is_file()]


def write_all() -> list[str]:
    """Build every translated notebook; the names written."""
    BUILT.mkdir(exist_ok=True)
    written = []
    for notebook in translated():
        text = notebook_text(build(notebook, read_translation(translation_file(notebook))))
        target = BUILT / notebook.name
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            tmp = target.with_suffix(".ipynb.tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(target)  # atomic: a reader sees the old notebook or the new one
            written.append(notebook.name)
    return written


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = [problem for notebook in translated() for problem in problems(notebook)]
        print("\n".join(found) if found else f"{len(translated())} translated notebooks in step "
              "with the English")
        pending = [nb.stem for nb in english_notebooks() if nb not in translated()]
        if pending:
            print(f"not translated yet: {', '.join(pending)}")
        return 1 if found else 0
    if argv:
        print(__doc__)
        return 2
    written = write_all()
    print(f"built {len(written)} notebook(s) in {BUILT.relative_to(ROOT)}: {', '.join(written)}"
          if written else "nothing to build: every translated notebook is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
