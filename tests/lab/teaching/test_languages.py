"""A Chinese classroom is the English one in other words: same cells, code, marks and points;
its questions and marking schemes come from the translations, and a question changed in English
but not in Chinese stops the build instead of reaching a class."""

import dataclasses

import pytest

from course_lib.lab.teaching import languages
from course_lib.lab.teaching.classroom import assignment_notebook
from course_lib.lab.teaching.exercise_catalog import EXERCISES
from course_lib.lab.teaching.written_answers import marking_schemes, written_cells

WRITTEN = [(exercise, item.name) for exercise, spec in EXERCISES.items()
           for item in spec.written]


def test_a_language_the_course_lacks_is_named_with_those_it_has():
    with pytest.raises(ValueError, match=r"'fr': the course is in en, zh-CN"):
        languages.check_language("fr")
    with pytest.raises(ValueError, match="'fr'"):
        languages.notebook_folder("fr")


@pytest.mark.parametrize(("exercise", "name"), WRITTEN)
def test_every_written_question_is_asked_in_chinese(exercise, name):
    english = languages.written_question(exercise, name, "en")
    chinese = languages.written_question(exercise, name, "zh-CN")
    assert chinese != english and any("\u4e00" <= ch <= "\u9fff" for ch in chinese)


def test_a_question_changed_in_english_since_its_translation_is_refused(monkeypatch):
    spec = EXERCISES["07"]
    changed = dataclasses.replace(spec.written[0], question=spec.written[0].question + " Why?")
    monkeypatch.setitem(EXERCISES, "07", dataclasses.replace(spec, written=(changed,)))
    with pytest.raises(ValueError, match="written question 07 trial-dev changed in English"):
        languages.written_question("07", "trial-dev", "zh-CN")


def test_an_unknown_question_is_named():
    with pytest.raises(ValueError, match="exercise 07 has no written question 'nope'"):
        languages.written_question("07", "nope", "zh-CN")


def test_a_missing_chinese_solution_says_how_to_build_it(monkeypatch, tmp_path):
    english = tmp_path / "07_similarity_thresholds.py"
    english.write_text('"""Worked solution: 07."""\n', encoding="utf-8")
    monkeypatch.setattr(languages, "solution_file", lambda exercise: english)
    assert languages.solution_in("07", "en") == english
    with pytest.raises(FileNotFoundError, match="tools/translations.py builds it"):
        languages.solution_in("07", "zh-CN")


@pytest.mark.parametrize("exercise", ["07", "12"])
def test_the_chinese_assignment_is_graded_as_the_english_one(exercise):
    english = assignment_notebook(exercise, language="en")
    chinese = assignment_notebook(exercise, language="zh-CN")
    assert len(chinese.cells) == len(english.cells)
    for en, zh in zip(english.cells, chinese.cells, strict=True):
        assert (zh.cell_type, zh.metadata) == (en.cell_type, en.metadata)
        if en.cell_type == "code":
            assert zh.source == en.source
    notes = [cell.source for cell in chinese.cells if "计分：" in cell.source]
    assert len(notes) == 1 and "solutions/" not in notes[0]  # the pointer was replaced


def test_the_chinese_marking_schemes_are_read_from_the_chinese_solution():
    schemes = marking_schemes(languages.solution_in("12", "zh-CN"))
    assert list(schemes) == [item.name for item in EXERCISES["12"].written]
    assert all(scheme.startswith("- 2 分：") for scheme in schemes.values())
    question, answer = written_cells("12", "zh-CN")[:2]
    assert question.source.startswith("**书面回答 1/2**")
    assert "评分标准" in answer.source and "- 2 分：" in answer.source


@pytest.mark.slow
def test_nbgrader_releases_the_chinese_assignment_with_the_same_graded_cells(tmp_path):
    """``make classroom LANG=zh-CN`` end to end, nbgrader's release included (about a minute)."""
    import nbformat

    from course_lib.lab.teaching.classroom import build_classroom

    released = {}
    for language in ("en", "zh-CN"):
        build_classroom(tmp_path / language, ["12"], self_check=True, language=language)
        released[language] = nbformat.read(
            tmp_path / language / "release" / "12_knowing_when_to_say_no" /
            "12_knowing_when_to_say_no.ipynb", as_version=4)
    english, chinese = released["en"], released["zh-CN"]
    def marks(notebook):  # a locked cell's checksum is of its text, which is the language's
        return [{k: v for k, v in c.metadata.get("nbgrader", {}).items() if k != "checksum"}
                for c in notebook.cells]

    assert marks(chinese) == marks(english)
    assert [c.source for c in chinese.cells if c.cell_type == "code"] == \
        [c.source for c in english.cells if c.cell_type == "code"]
    text = "\n".join(c.source for c in chinese.cells if c.cell_type == "markdown")
    assert "**书面回答 1/2**" in text and "计分：2 分" in text
    assert "评分标准" not in text and "- 2 分：" not in text  # the schemes stay the teacher's
