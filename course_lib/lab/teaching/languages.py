"""The languages a classroom lab is released in: English, and Simplified Chinese (``zh-CN``).

A Chinese classroom is the English one with every word a student or teacher reads in Chinese,
and nothing else changed — the same assignments, code, answers and points. The words come from
the course's translations, which CI keeps in step with the English (``tools/translations.py``):

* the notebook: ``notebooks/zh-CN/NN_name.ipynb`` (the English code and outputs, Chinese prose);
* the marking schemes: ``solutions/zh-CN/NN_name.md`` (the worked solution's docstring in
  Chinese; its code is the English file's);
* the written questions: ``i18n/zh-CN/exercises.yaml``, each with the hash of the English
  question it translates — a question changed in English and not in Chinese is an error here,
  not a stale question in front of a class;
* the classroom's own sentences (the grading note, the question and marking-scheme cells):
  :data:`WORDS`.

What it does not translate: what the check prints (the library's hints and verdicts are the
same text in both editions, like every code output).

>>> written_question("07", "trial-dev", "zh-CN")[:12]
'为什么阈值在 trial'
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from ..._support.places import COURSE_ROOT
from .exercise_catalog import EXERCISES
from .exercises import solution_file

LANGUAGES = ("en", "zh-CN")

# The classroom's own sentences, as format strings (their fields: see classroom and
# written_answers, which fill them).
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "graded": "*(Graded: {points} points, one per answer{written}. {checking}the grade is "
                  "computed after you submit.)*",
        "self-check": "The check below says whether your answers are right and gives hints; ",
        "no-self-check": "The check below does not check them in this copy; ",
        "written-note": ", and {points} points for the {count} written answer{s} after the "
                        "check, graded by your teacher",
        "question": "**Written answer{number}** *({points} points, graded by your teacher "
                    "after you submit)*. {question} Answer in the cell below, in a few "
                    "sentences, with your numbers.",
        "number": " {n} of {total}",
        "scheme": "**Marking scheme** ({points} points), for the teacher: this cell is in "
                  "`source/` only — the release has \"YOUR ANSWER HERE\" here, and each "
                  "submission the student's answer.\n\n{scheme}",
    },
    "zh-CN": {
        "graded": "*（计分：{points} 分，每个答案 1 分{written}。{checking}成绩在你提交之后"
                  "计算。）*",
        "self-check": "下面的检查会告诉你答案是否正确，并给出提示；",
        "no-self-check": "在这份副本中，下面的检查不会核对你的答案；",
        "written-note": "；另有 {points} 分给检查之后的{count}道书面回答，由老师评分",
        "question": "**书面回答{number}** *（{points} 分，你提交之后由老师评分）*。{question}"
                    "请在下面的单元格中用几句话作答，并用上你得到的数字。",
        "number": " {n}/{total}",
        "scheme": "**评分标准**（{points} 分），供老师使用：此单元格只在 `source/` 中——发布版中"
                  "这里是 \"YOUR ANSWER HERE\"，每份提交中是学生的回答。\n\n{scheme}",
    },
}
COUNTS = {"en": ("", "one", "two", "three", "four"), "zh-CN": ("", "一", "两", "三", "四")}


def check_language(language: str) -> str:
    """``language`` if the course has it, else a ``ValueError`` naming the ones it has."""
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r}: the course is in {', '.join(LANGUAGES)}")
    return language


def english_hash(text: str) -> str:
    """What a translation records of the English it translates: 12 hex digits of SHA-256.

    >>> english_hash("recall")
    '2ed6b4c1ae9f'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def notebook_folder(language: str) -> Path:
    """Where the course's notebooks in ``language`` are."""
    folder = COURSE_ROOT / "notebooks"
    return folder if check_language(language) == "en" else folder / language


def solution_in(exercise: str, language: str) -> Path:
    """Where the prose (method, marking schemes) of ``exercise``'s worked solution is in
    ``language``: the English ``.py`` file, or its docstring's translation (``.md``); read it
    with :func:`.exercises.solution_prose`."""
    english = solution_file(exercise)
    if check_language(language) == "en":
        return english
    translated = english.parent / language / f"{english.stem}.md"
    if not translated.is_file():
        raise FileNotFoundError(f"{translated} is missing: python tools/translations.py builds "
                                f"it from i18n/{language}/")
    return translated


def written_question(exercise: str, name: str, language: str) -> str:
    """The written question ``name`` of ``exercise`` in ``language``; a ``ValueError`` if its
    translation is missing or was made from another English question."""
    english = next((item.question for item in EXERCISES[exercise].written if item.name == name),
                   None)
    if english is None:
        raise ValueError(f"exercise {exercise} has no written question {name!r}")
    if check_language(language) == "en":
        return english
    path = COURSE_ROOT / "i18n" / language / "exercises.yaml"
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))["written"]
    entry = next((e for e in entries if (e["exercise"], e["name"]) == (exercise, name)), None)
    if entry is None:
        raise ValueError(f"{path}: no translation of written question {exercise} {name}")
    if entry["en"] != english_hash(english):
        raise ValueError(f"{path}: written question {exercise} {name} changed in English since "
                         f"it was translated (hash now {english_hash(english)}): translate it "
                         "again and update en:")
    return str(entry["zh"]).strip()
