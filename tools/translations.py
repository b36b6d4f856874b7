"""The Chinese notebooks: built from the English ones and their translations, never by hand.

One source, two languages. A Chinese notebook holds exactly the English notebook's cells, in
order, with their ids, its code cells and their committed outputs copied byte for byte (never
executed a second time); only the markdown is translated. The layout:

    i18n/zh-CN/glossary.yaml       the course's terms, one translation each
    i18n/zh-CN/NN_name.yaml        per notebook: each markdown cell's translation, keyed by the
                                   English cell's id, with the hash of the English text it
                                   translates (``en:``)
    notebooks/zh-CN/NN_name.ipynb  built here
    i18n/zh-CN/README.yaml         the prose documents, block by block (see "prose documents"
    i18n/zh-CN/teaching.yaml       below), built into README.zh-CN.md, docs/teaching.zh-CN.md
    i18n/zh-CN/solutions/NN.yaml   and solutions/zh-CN/NN_name.md (a worked solution's docstring
                                   — method, marking schemes — in Chinese; its code stays
                                   in solutions/NN_name.py alone)
    i18n/zh-CN/exercises.yaml      the classroom's written questions (read where a classroom is
                                   built: course_lib.lab.teaching.languages)

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

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import yaml

from course_lib.lab.teaching.languages import english_hash

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = "zh-CN"
SOURCES = ROOT / "i18n" / LANGUAGE
BUILT = ROOT / "notebooks" / LANGUAGE
ENGLISH = ROOT / "notebooks"
# A number as the text writes it: digits, thousands commas, a decimal part. Chinese text keeps
# the English digits (no 二十六 for 26), so the two cells hold the same numbers.
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


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


def prose_problems(english: str, chinese: str, terms: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with ``chinese`` as the translation of ``english``, each problem a phrase
    that follows the place's name (": the numbers differ …"): numbers lost or added, a glossary
    term missing or avoided, a character that is not Simplified."""
    from course_lib.scripts import to_simplified

    found = []
    if numbers(english) != numbers(chinese):
        lost = sorted((numbers(english) - numbers(chinese)).elements())
        added = sorted((numbers(chinese) - numbers(english)).elements())
        found.append(f": the numbers differ from the English (missing {lost}, added {added})")
    # Code spans keep their English, and so does the name in a marking scheme's label.
    plain = re.sub(r"`[^`]*`|^Marking [a-z0-9-]+:$", "", english, flags=re.M).lower()
    # Longest terms first, each match then blanked: "multi-path retrieval" asks for 多路召回,
    # not also for 检索. "recall@5" is a metric's name, kept in English: no 召回率 needed.
    for term in sorted(terms, key=len, reverse=True):
        pattern = rf"\b{re.escape(term)}(?:s|es)?\b(?!@|\.\w)"  # not "node" of Node.js
        if re.search(pattern, plain) and terms[term]["zh"] not in chinese:
            found.append(f" says {term!r} in English but not {terms[term]['zh']!r} in Chinese "
                         "(the glossary's term)")
        plain = re.sub(pattern, " ", plain)
    for term, entry in terms.items():
        for word in entry.get("avoid", []):
            if word in chinese:
                found.append(f" writes {word!r}: the glossary says {term!r} is {entry['zh']!r}")
    # Traditional text the English quotes (a DRCD example, 馬祖列島) stays as quoted.
    changed = sorted({a for a, b in zip(chinese, to_simplified(chinese), strict=False) if a != b}
                     - set(english))
    if changed:
        found.append(f" is not Simplified Chinese throughout: {''.join(changed)}")
    return found


def problems(notebook: Path, sources: Path = SOURCES, built_folder: Path = BUILT) -> list[str]:
    """Everything wrong with ``notebook``'s translation, each naming the notebook and cell."""
    name = notebook.stem
    english = read_notebook(notebook)
    translation = read_translation(translation_file(notebook, sources))
    found = []
    markdown = {cell["id"]: "".join(cell["source"]) for cell in english["cells"]
                if cell["cell_type"] == "markdown"}
    terms = glossary(sources)
    for cell_id, source in markdown.items():
        if cell_id not in translation:
            found.append(f"{name}: markdown cell {cell_id} has no translation")
            continue
        entry = translation[cell_id]
        if entry["en"] != english_hash(source):
            found.append(f"{name}: markdown cell {cell_id} changed in English since it was "
                         f"translated (hash now {english_hash(source)}, translated from "
                         f"{entry['en']}): translate it again and update en:")
        found += [f"{name}: markdown cell {cell_id}{problem}"
                  for problem in prose_problems(source, entry["zh"], terms)]
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



# --- prose documents: the README, the teacher's guide, the worked solutions' docstrings ------
# A document is translated block by block: its text split at blank lines (outside code
# fences). A translation file lists, in order, each prose block's translation with the hash of
# the English block (``blocks: [{en, zh}]``); a block that is wholly a code fence, or has no
# Latin letter, is shared as it is. English blocks and translations are matched in order by
# their hashes, so an edit, an insertion or a deletion names just the blocks it touched.
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A table row or a top-level list item is a block of its own, so an edit names just it.
ITEM = re.compile(r"\||[*-] |\d+\. ")
CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Document:
    """A prose file of the course and its Chinese: ``english`` (read), ``translation`` (the
    i18n file), ``built`` (written here). ``docstring``: only the module docstring of a Python
    file is prose — a worked solution, whose Chinese is its docstring alone, in Markdown: its
    code is the English file's, never copied."""

    english: Path
    translation: Path
    built: Path
    docstring: bool = False


def documents(sources: Path = SOURCES) -> list[Document]:
    """The course's prose documents with a translation file in ``sources``."""
    listed = [Document(ROOT / "README.md", sources / "README.yaml", ROOT / "README.zh-CN.md"),
              Document(ROOT / "docs" / "teaching.md", sources / "teaching.yaml",
                       ROOT / "docs" / "teaching.zh-CN.md")]
    listed += [Document(path, sources / "solutions" / f"{path.stem}.yaml",
                        ROOT / "solutions" / LANGUAGE / f"{path.stem}.md", docstring=True)
               for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.py"))]
    return [doc for doc in listed if doc.translation.is_file()]


def prose_blocks(text: str) -> list[str]:
    """``text`` split after each run of blank lines outside code fences, and before each table
    row and top-level list item; the pieces join back to ``text``.

    >>> prose_blocks("One.\\n\\n```\\na\\n\\nb\\n```\\nTwo.\\n")
    ['One.\\n\\n', '```\\na\\n\\nb\\n```\\nTwo.\\n']
    """
    pieces, current, fence = [], [], None
    for line in text.splitlines(keepends=True):
        if fence is None and line.strip() and current and (
                not current[-1].strip() or ITEM.match(line)):
            pieces.append("".join(current))
            current = []
        current.append(line)
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None and re.fullmatch(rf"{fence[0]}{{{len(fence)},}}", line.strip()):
            fence = None
    if current:
        pieces.append("".join(current))
    return pieces


def is_prose(block: str) -> bool:
    """Whether a block is translated: not wholly a code fence, and some Latin letter in it."""
    body = block.strip()
    fenced = FENCE.match(body) and body.endswith(FENCE.match(body).group(1)) and "\n" in body
    return not fenced and bool(re.search("[A-Za-z]", body))


def fences(text: str) -> list[str]:
    """The fenced code of ``text``, fence lines included: shared, never translated."""
    return [found.group(0) for found in re.finditer(
        r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[ \t]*$", text, re.S | re.M)]


def english_prose(document: Document) -> str:
    """The English prose of ``document``: the whole file, or a Python file's docstring (its text
    between the opening and closing triple quotes, as written)."""
    text = document.english.read_text(encoding="utf-8")
    if not document.docstring:
        return text
    found = re.match(r'\s*"""(.*?)"""', text, re.S)
    if not found:
        raise ValueError(f"{shown(document.english)}: must begin with a docstring")
    return found.group(1)


def read_blocks(path: Path) -> list[dict[str, str]]:
    """``[{"en": hash, "zh": text}]`` from a document's translation file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    blocks = data.get("blocks")
    if not isinstance(blocks, list) or not all(
            isinstance(entry, dict) and set(entry) == {"en", "zh"} for entry in blocks):
        raise ValueError(f"{shown(path)}: needs a list 'blocks' of {{en, zh}} entries")
    return [{"en": str(entry["en"]), "zh": str(entry["zh"]).strip("\n")} for entry in blocks]


def aligned(document: Document) -> tuple[list[str], dict[int, str], list[str]]:
    """(the English blocks, {index of a prose block: its translation}, problems). Blocks and
    translations are matched in order by hash (difflib); what does not match is a problem."""
    english = prose_blocks(english_prose(document))
    prose = [i for i, block in enumerate(english) if is_prose(block)]
    entries = read_blocks(document.translation)
    hashes = [english_hash(english[i].strip()) for i in prose]
    name = shown(document.english)

    def where(i: int) -> str:
        line = 1 + sum(block.count("\n") for block in english[:i])
        return f"{name}, line {line} ({' '.join(english[i].split())[:50]!r})"

    matched, found = {}, []
    opcodes = SequenceMatcher(None, hashes, [e["en"] for e in entries], autojunk=False)
    for tag, i1, i2, j1, j2 in opcodes.get_opcodes():
        if tag == "equal":
            matched.update({prose[i]: entries[j]["zh"]
                            for i, j in zip(range(i1, i2), range(j1, j2), strict=True)})
            continue
        for i in range(i1, i2):
            found.append(f"{where(prose[i])}: " + ("changed in English since it was translated "
                         f"(hash now {hashes[i]}): translate it again and update en:"
                         if tag == "replace" else "has no translation"))
        if tag == "insert" or (tag == "replace" and j2 - j1 > i2 - i1):
            gone = [entries[j]["en"] for j in range(j1 + (i2 - i1 if tag == "replace" else 0), j2)]
            found.append(f"{shown(document.translation)}: translations of blocks {name} no "
                         f"longer has (en: {', '.join(gone)}): remove them")
    return english, matched, found


def build_document(document: Document) -> str:
    """The Chinese file of ``document``: each matched prose block replaced by its translation
    (the blank lines after it kept), everything else as in English."""
    english, matched, _ = aligned(document)
    prose = "".join(matched[i] + block[len(block.rstrip()):] if i in matched else block
                    for i, block in enumerate(english))
    if not document.docstring:
        return prose
    code = document.english.name
    return (f"*`solutions/{code}` 的文档字符串（方法与评分标准）的中文译文，由 "
            f"`tools/translations.py` 生成；代码只在 [`{code}`](../{code}) 中，下文的“本文件”"
            f"指的就是它。*\n\n{prose.strip()}\n")


def document_problems(document: Document, sources: Path = SOURCES) -> list[str]:
    """Everything wrong with ``document``'s translation, each naming the file and line."""
    english, matched, found = aligned(document)
    terms = glossary(sources)
    name = shown(document.english)
    for i, chinese in matched.items():
        line = 1 + sum(block.count("\n") for block in english[:i])
        place = f"{name}, line {line}"
        source = english[i].strip()
        found += [place + problem for problem in prose_problems(source, chinese, terms)]
        if fences(source) != fences(chinese):
            found.append(f"{place}: its code blocks differ from the English (code is shared)")
        words = re.findall(r"[A-Za-z]{2,}", re.sub(r"`[^`]*`|\]\([^)]*\)|<[^>]*>", "", source))
        if len(words) >= 4 and not CJK.search(chinese):
            found.append(f"{place}: not translated yet (no Chinese in the translation)")
    built = document.built
    if not built.is_file():
        found.append(f"{shown(built)} is missing: run python tools/translations.py")
    elif built.read_text(encoding="utf-8") != build_document(document):
        found.append(f"{shown(built)} is not what the translation tool builds (edited by hand, "
                     "or the English changed): run python tools/translations.py")
    return found


def new_translation(document: Document) -> None:
    """Start ``document``'s translation file: every prose block with its hash, its ``zh`` the
    English (the check reports each as not translated until it is)."""
    english = prose_blocks(english_prose(document))
    blocks = [{"en": english_hash(block.strip()), "zh": block.strip() + "\n"}
              for block in english if is_prose(block)]
    header = (f"# {shown(document.english)} 的简体中文译文：每个文字块一条，按顺序；"
              "en 是所译英文块的哈希\n"
              "# （python tools/translations.py --check 会指出过期的译文）。\n")
    document.translation.parent.mkdir(parents=True, exist_ok=True)
    document.translation.write_text(header + yaml.dump({"blocks": blocks}, allow_unicode=True,
                                                       sort_keys=False, width=100,
                                                       Dumper=_BlockDumper), encoding="utf-8")


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings as ``|`` blocks, the way the translation files are written."""


_BlockDumper.add_representer(
    str, lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def translated(sources: Path = SOURCES) -> list[Path]:
    """The English notebooks that have a translation file."""
    return [nb for nb in english_notebooks() if translation_file(nb, sources).is_file()]


def exercise_problems(sources: Path = SOURCES) -> list[str]:
    """What is wrong with the written questions' translations (``exercises.yaml``, read by
    ``make classroom LANG=zh-CN``): each question needs one, made from its current English."""
    from course_lib.lab.teaching.exercise_catalog import EXERCISES

    path = sources / "exercises.yaml"
    entries = {(str(e["exercise"]), str(e["name"])): e
               for e in yaml.safe_load(path.read_text(encoding="utf-8"))["written"]}
    terms, found = glossary(sources), []
    questions = {(exercise, item.name): item.question
                 for exercise, spec in EXERCISES.items() for item in spec.written}
    for (exercise, name), question in questions.items():
        place = f"{shown(path)}: written question {exercise} {name}"
        entry = entries.get((exercise, name))
        if entry is None:
            found.append(f"{place} has no translation")
            continue
        if entry["en"] != english_hash(question):
            found.append(f"{place} changed in English since it was translated (hash now "
                         f"{english_hash(question)}): translate it again and update en:")
        found += [place + problem for problem in prose_problems(question, entry["zh"], terms)]
    found += [f"{shown(path)}: a translation of {exercise} {name}, which the exercises no "
              "longer ask: remove it" for exercise, name in entries.keys() - questions.keys()]
    return found


def _write(target: Path, text: str) -> bool:
    """Write ``text`` to ``target`` atomically (a reader sees the old file or the new one) when
    it differs; whether it did."""
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return True


def write_all() -> list[str]:
    """Build every translated notebook and document; the names written."""
    written = [notebook.name for notebook in translated()
               if _write(BUILT / notebook.name, notebook_text(
                   build(notebook, read_translation(translation_file(notebook)))))]
    written += [shown(document.built) for document in documents()
                if _write(document.built, build_document(document))]
    return written


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = [problem for notebook in translated() for problem in problems(notebook)]
        found += [problem for document in documents() for problem in document_problems(document)]
        found += exercise_problems()
        print("\n".join(found) if found else f"{len(translated())} translated notebooks and "
              f"{len(documents())} documents in step with the English")
        pending = [nb.stem for nb in english_notebooks() if nb not in translated()]
        if pending:
            print(f"not translated yet: {', '.join(pending)}")
        return 1 if found else 0
    if argv:
        print(__doc__)
        return 2
    written = write_all()
    print(f"built {len(written)} file(s): {', '.join(written)}" if written else
          "nothing to build: every translation is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
