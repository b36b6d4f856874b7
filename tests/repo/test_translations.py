"""The Chinese notebooks stay in step with the English ones (tools/translations.py): the check
finds nothing on the committed files, and each kind of drift it exists for is named — an English
cell changed without its translation, a translation missing, a number lost, a term the glossary
avoids, a Traditional character, a copied output edited by hand."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402

TRANSLATED = translations.translated()


def test_some_notebooks_are_translated_and_every_built_one_has_its_source():
    assert TRANSLATED, "no translation in i18n/zh-CN/"
    built = sorted(path.name for path in translations.BUILT.glob("*.ipynb"))
    assert built == [notebook.name for notebook in TRANSLATED]


@pytest.mark.parametrize("notebook", TRANSLATED, ids=lambda path: path.stem)
def test_the_translation_is_in_step_with_the_english(notebook):
    assert translations.problems(notebook) == []


@pytest.mark.parametrize("notebook", TRANSLATED, ids=lambda path: path.stem)
def test_the_chinese_notebook_has_the_english_code_and_outputs(notebook):
    english = translations.read_notebook(notebook)
    chinese = translations.read_notebook(translations.BUILT / notebook.name)
    assert [c["id"] for c in chinese["cells"]] == [c["id"] for c in english["cells"]]
    for en, zh in zip(english["cells"], chinese["cells"], strict=True):
        if en["cell_type"] == "code":
            assert zh == en
        else:
            assert zh["source"] != en["source"], f"cell {en['id']} is not translated"


def _english_copy(tmp_path: Path, notebook: Path, edit) -> Path:
    """``notebook`` copied into ``tmp_path/en/``, one of its cells changed by ``edit``."""
    data = translations.read_notebook(notebook)
    edit(data["cells"])
    copy = tmp_path / "en" / notebook.name
    copy.parent.mkdir()
    copy.write_text(translations.notebook_text(data), encoding="utf-8")
    return copy


def test_an_english_cell_changed_without_its_translation_is_named(tmp_path):
    notebook = TRANSLATED[0]
    english = translations.read_notebook(notebook)
    first = next(c for c in english["cells"] if c["cell_type"] == "markdown")

    def edit(cells):
        cell = next(c for c in cells if c["id"] == first["id"])
        cell["source"] = cell["source"] + ["\n", "A sentence added in English only.\n"]

    found = translations.problems(_english_copy(tmp_path, notebook, edit))
    assert any(f"{notebook.stem}: markdown cell {first['id']} changed in English since it was "
               "translated" in problem for problem in found), found


def _sources_copy(tmp_path: Path, notebook: Path, edit) -> Path:
    """i18n/zh-CN/ copied into ``tmp_path/i18n/``, ``notebook``'s translation changed by
    ``edit``."""
    sources = tmp_path / "i18n"
    shutil.copytree(translations.SOURCES, sources)
    path = translations.translation_file(notebook, sources)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data["cells"])
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return sources


@pytest.mark.parametrize(("edit", "named"), [
    (lambda cells: cells.pop(1), "has no translation"),
    (lambda cells: cells[0].update(zh=cells[0]["zh"].replace("26", "27")),
     "the numbers differ from the English (missing ['26'], added ['27'])"),
    (lambda cells: cells[0].update(zh=cells[0]["zh"] + "\n查全率。"),
     "writes '查全率': the glossary says 'recall' is '召回率'"),
    (lambda cells: [c.update(zh=c["zh"].replace("召回率", "召回")) for c in cells],
     "says 'recall' in English but not '召回率' in Chinese"),
    (lambda cells: cells[0].update(zh=cells[0]["zh"] + "\n資料。"),
     "is not Simplified Chinese throughout: 資"),
    (lambda cells: cells.append({"id": "gone0000", "en": "0", "zh": "多余的。"}),
     "the translation of cell gone0000, which the English notebook no longer has"),
], ids=["missing", "number", "avoided-term", "term-missing", "traditional", "left-over"])
def test_each_kind_of_drift_in_a_translation_is_named(tmp_path, edit, named):
    notebook = TRANSLATED[0]
    found = translations.problems(notebook, sources=_sources_copy(tmp_path, notebook, edit))
    assert any(named in problem and problem.startswith(notebook.stem) for problem in found), found


def test_a_copied_output_edited_in_the_chinese_notebook_is_named(tmp_path):
    notebook = TRANSLATED[0]
    built = tmp_path / "zh-CN"
    shutil.copytree(translations.BUILT, built)
    data = json.loads((built / notebook.name).read_text(encoding="utf-8"))
    code = next(c for c in data["cells"] if c["cell_type"] == "code" and c.get("outputs"))
    code["outputs"] = []
    (built / notebook.name).write_text(translations.notebook_text(data), encoding="utf-8")
    found = translations.problems(notebook, built_folder=built)
    assert any("is not what the translation tool builds" in problem for problem in found), found


def test_nbval_runs_the_english_notebooks_only():
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval",
                             "-p", "no:cacheprovider", "notebooks"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300).stdout
    assert "notebooks/00_setup_and_data.ipynb" in listed and "zh-CN" not in listed


# --- the prose documents: README, teacher's guide, worked solutions' docstrings -------------
DOCUMENTS = translations.documents()


def test_the_readme_the_guide_and_every_solution_have_a_translation():
    english = {doc.english.relative_to(ROOT).as_posix() for doc in DOCUMENTS}
    assert {"README.md", "docs/teaching.md"} <= english
    assert {f"solutions/{p.name}" for p in (ROOT / "solutions").glob("[0-9][0-9]_*.py")} <= english


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda doc: doc.english.name)
def test_the_document_is_in_step_with_the_english(document):
    assert translations.document_problems(document) == []


@pytest.mark.parametrize("document", [d for d in DOCUMENTS if d.docstring],
                         ids=lambda doc: doc.english.name)
def test_a_chinese_solution_is_its_docstring_in_chinese_and_no_code(document):
    """The code of a worked solution is in one place, the English file: its Chinese edition
    holds the translated docstring (method, marking schemes) and points at the code."""
    chinese = document.built.read_text(encoding="utf-8")
    assert document.built.suffix == ".md" and f"](../{document.english.name})" in chinese
    assert not [line for line in chinese.splitlines()
                if line.startswith(("# %%", "import ", "from ", "def "))]
    assert any(line.startswith(("方法：", "评分标准 ")) for line in chinese.splitlines()) or \
        document.english.name.startswith("00")


def _readme_changed(tmp_path: Path, edit) -> translations.Document:
    """The README with ``edit`` applied to its text, against the committed translation."""
    readme = tmp_path / "README.md"
    readme.write_text(edit((ROOT / "README.md").read_text(encoding="utf-8")), encoding="utf-8")
    return translations.Document(readme, translations.SOURCES / "README.yaml",
                                 tmp_path / "README.zh-CN.md")


def test_an_english_paragraph_changed_without_its_translation_is_named_with_its_line(tmp_path):
    sentence = "Everything runs **offline on a laptop CPU**."
    document = _readme_changed(tmp_path, lambda text: text.replace(
        sentence, sentence + " Even on a train."))
    found = translations.document_problems(document)
    line = 1 + (ROOT / "README.md").read_text(encoding="utf-8").split(
        "The course re-teaches")[0].count("\n")
    assert any(f"README.md, line {line} ('The course re-teaches" in problem and
               "changed in English since it was translated" in problem for problem in found), found


@pytest.mark.parametrize(("edit", "named"), [
    (lambda text: text.replace("\n## Licences\n", "\n## Licences\n\nA new paragraph here.\n"),
     "has no translation"),
    (lambda text: text.replace("\n## Licences\n", "\n"),
     "translations of blocks"),
], ids=["added", "removed"])
def test_a_paragraph_added_or_removed_in_english_is_named(tmp_path, edit, named):
    found = translations.document_problems(_readme_changed(tmp_path, edit))
    assert any(named in problem for problem in found), found
    assert len(found) <= 3, found  # only the touched block (and the built file) are named


def test_code_in_a_translated_paragraph_must_stay_the_englishs(tmp_path):
    english = tmp_path / "guide.md"
    english.write_text("Run this before you start, from the course folder:\n```bash\n"
                       "make test\n```\n", encoding="utf-8")
    block = translations.prose_blocks(english.read_text(encoding="utf-8"))[0].strip()
    translation = tmp_path / "guide.yaml"
    translation.write_text(yaml.safe_dump({"blocks": [{
        "en": translations.english_hash(block),
        "zh": "开始之前，在课程文件夹中运行：\n```bash\nmake tests\n```"}]}, allow_unicode=True),
        encoding="utf-8")
    found = translations.document_problems(
        translations.Document(english, translation, tmp_path / "guide.zh-CN.md"))
    assert any("its code blocks differ from the English" in problem for problem in found), found


def test_a_written_question_changed_in_english_is_named(monkeypatch):
    import dataclasses

    from course_lib.lab.teaching.exercise_catalog import EXERCISES

    assert translations.exercise_problems() == []
    spec = EXERCISES["13"]
    changed = dataclasses.replace(spec.written[1], question=spec.written[1].question + " Now.")
    monkeypatch.setitem(EXERCISES, "13", dataclasses.replace(
        spec, written=(spec.written[0], changed)))
    found = translations.exercise_problems()
    assert any("written question 13 not-detectable changed in English" in p for p in found), found


def test_each_readme_says_how_to_choose_and_links_the_other():
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "](README.zh-CN.md)" in english and "](README.md)" in chinese
    for text in (english, chinese):
        assert "make lab LANG=zh-CN" in text and "make classroom LANG=zh-CN" in text
