"""The SQuAD format, read with care: :func:`load_squad` keeps every usable question of a
SQuAD-style file (CMRC 2018, DRCD, your own) and counts what it repaired
(:meth:`SquadSet.summary`); a file that is not in the format gets a
:class:`DatasetFormatError` naming the place inside it. :mod:`course_lib.lab.data.datasets`
fetches the files and builds knowledge bases from them, and offers every name here too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from ..._support.validation import find_surrogate
from ...store.json_shape import problem, type_name


class DatasetFormatError(ValueError):
    """A data file is not in the format its loader reads.

    The message names the file, the place inside it (for SQuAD, a path such as
    ``data[0].paragraphs[2].qas[1].answers[0].answer_start``) and what was expected
    there. A subclass of ``ValueError``, so code that caught ``ValueError`` still works.
    """


@dataclass
class Question:
    id: str
    question: str
    answers: list[str]
    answer_starts: list[int]
    paragraph_id: str
    paragraph: str  # the gold passage
    file_name: str = ""
    paragraph_offset: int = 0  # where the paragraph starts inside its knowledge-base file


@dataclass
class Article:
    """One article of a SQuAD file: its key (the file's ``id`` field, else its place
    ``a<n>``), its title and its paragraphs' ids, in file order."""
    key: str
    title: str
    paragraph_ids: list[str]


@dataclass
class SquadSet:
    paragraphs: list[tuple[str, str]]  # (paragraph id, text), in file order; ids are unique
    questions: list[Question]
    skipped: list[str] = field(default_factory=list)  # ids of empty questions
    fixed_offsets: list[str] = field(default_factory=list)  # ids whose answer_start was off
    # ids of questions that lost an answer labelled answer_start = -1 whose text is not in
    # the context (CMRC dev: annotators' variants with extra punctuation), one id per answer
    dropped_answers: list[str] = field(default_factory=list)
    articles: list[Article] = field(default_factory=list)  # in file order

    def summary(self) -> str:
        """One line: what was loaded and what was repaired.

        >>> print(SquadSet([("p", "甲")], [], ["q9"], ["q1"], ["q2", "q2"]).summary())
        ... # doctest: +NORMALIZE_WHITESPACE
        1 paragraphs, 0 questions (1 empty skipped, 1 answer offsets fixed, 2 unlocatable
        answers dropped from 1 questions)
        """
        return (f"{len(self.paragraphs)} paragraphs, {len(self.questions)} questions "
                f"({len(self.skipped)} empty skipped, {len(self.fixed_offsets)} answer offsets "
                f"fixed, {len(self.dropped_answers)} unlocatable answers dropped from "
                f"{len(set(self.dropped_answers))} questions)")


_EXPECTED = {
    "file": 'a JSON object {"data": [article, ...]} (the SQuAD format)',
    "article": 'an article: {"title": ..., "paragraphs": [...]}',
    "paragraph": 'a paragraph: {"context": "...", "qas": [...]}',
    "question": 'a question: {"id": "...", "question": "...", "answers": [...]}',
    "answer": 'an answer: {"text": "...", "answer_start": 0}',
}


class _SquadReader:
    """Checks one parsed SQuAD file while reading it; every complaint names ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, message: str) -> NoReturn:
        raise DatasetFormatError(f"{self.path}: {message}")

    def record(self, value: Any, where: str, kind: str) -> dict[str, Any]:
        """``value`` itself, which must be a JSON object (an article, a paragraph, ...)."""
        if not isinstance(value, dict):
            self.fail(f"{where} must be {_EXPECTED[kind]}; got {type_name(type(value))}")
        return value

    def get(self, record: dict[str, Any], key: str, shape: Any, where: str, kind: str,
            optional: bool = False) -> Any:
        """``record[key]``, checked against ``shape`` (see :mod:`course_lib.store.json_shape`)."""
        name = f"{where}.{key}" if where else key
        if key not in record:
            if optional:
                return None
            self.fail(f"{where or 'the top level'} lacks the field {key!r}; "
                      f"expected {_EXPECTED[kind]}")
        value = record[key]
        wrong = problem(value, shape, name)
        if wrong:
            self.fail(f"{wrong}; expected {_EXPECTED[kind]}")
        if isinstance(value, str) and (bad := find_surrogate(value)):
            self.fail(f"{name} holds a lone surrogate {bad.group()!a} at character "
                      f"{bad.start()}: text must be valid Unicode (fix that escape in the file)")
        return value


def _read_json(path: Path) -> Any:
    """The parsed JSON of ``path``; a clear error for a missing, empty or broken file."""
    try:
        raw = path.read_bytes()
    except OSError as error:  # keeps its type: FileNotFoundError, IsADirectoryError, ...
        raise type(error)(error.errno, f"cannot read the SQuAD file ({error.strerror}); give "
                          "the path of a SQuAD-format JSON file", str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DatasetFormatError(
            f"{path} is not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start}): "
            "save it as UTF-8") from None
    if not text.strip():
        raise DatasetFormatError(f"{path} is empty; expected {_EXPECTED['file']}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DatasetFormatError(
            f"{path} is not valid JSON ({error.msg} at line {error.lineno} column "
            f"{error.colno}); expected {_EXPECTED['file']}") from None
    except RecursionError:
        raise DatasetFormatError(f"{path} is nested too deeply to be a SQuAD file; "
                                 f"expected {_EXPECTED['file']}") from None


def load_squad(path: str | os.PathLike[str]) -> SquadSet:
    """Read a SQuAD-format file: paragraphs in file order, and their questions.

    Empty questions are skipped (their ids are reported); an ``answer_start`` that
    does not point at the answer is corrected to the nearest true occurrence.

    Every paragraph gets a unique id: its own ``id`` field when it has one (two equal
    ones are an error), otherwise ``<title>_<i>`` (``i``: its place in the article), or
    ``article_<a>_<i>`` when the article has no title (``a``: the article's place in the
    file). A title that an earlier article already used gets ``#<a>`` added, so two
    articles sharing a title, or two untitled ones, never share ids — questions always
    point at their own paragraph.

    The whole file is checked as it is read. Anything missing, of the wrong type, or
    holding a lone surrogate (``"\\ud800"``) raises :class:`DatasetFormatError` naming the
    file, the place (``data[0].paragraphs[2].qas[1].answers[0].answer_start``) and what
    was expected; an unreadable file keeps its ``OSError`` type (``FileNotFoundError``
    for a missing one) with the path in the message. Fields the loader does not use
    (``version``, ``is_impossible``, ...) are ignored, not checked. A question id may be
    a string or an integer (read as its text); an answer's ``text`` must not be empty
    and its ``answer_start`` must be an integer ≥ 0, or -1, SQuAD's "not located": such an
    answer is located when its text occurs in the context (counted in ``fixed_offsets``)
    and otherwise dropped (counted in ``dropped_answers``) — the question is kept. A
    question left with no answer at all is kept too, with an empty answer list (its
    paragraph is still known). A UTF-8 byte-order mark is allowed.
    """
    path = Path(path)
    reader = _SquadReader(path)
    top = _read_json(path)
    if not isinstance(top, dict):
        reader.fail(f"the top level must be {_EXPECTED['file']}; got {type_name(type(top))}")
    articles = reader.get(top, "data", [object], "", "file")
    result = SquadSet([], [])
    explicit: dict[str, str] = {}  # paragraph id -> where it was given, to find repeats
    unnamed: list[tuple[int, int, int, str | None]] = []  # (paragraph slot, a, i, title)
    slots: list[int] = []  # each question's paragraph, by its place in result.paragraphs
    article_slots: list[tuple[str, str, range]] = []  # (key, title, its paragraphs' slots)
    for a, article in enumerate(articles):
        where_a = f"data[{a}]"
        article = reader.record(article, where_a, "article")
        title = reader.get(article, "title", (str, None), where_a, "article", optional=True)
        key = reader.get(article, "id", (str, int, None), where_a, "article", optional=True)
        paragraphs = reader.get(article, "paragraphs", [object], where_a, "article")
        first_slot = len(result.paragraphs)
        for i, paragraph in enumerate(paragraphs):
            where_p = f"{where_a}.paragraphs[{i}]"
            paragraph = reader.record(paragraph, where_p, "paragraph")
            pid = reader.get(paragraph, "id", (str, None), where_p, "paragraph", optional=True)
            context = reader.get(paragraph, "context", str, where_p, "paragraph")
            qas = reader.get(paragraph, "qas", [object], where_p, "paragraph")
            if pid:
                if pid in explicit:
                    reader.fail(f"{where_p}.id {pid!r} repeats {explicit[pid]}.id: paragraph ids "
                                "must be unique (or leave them out to have them numbered)")
                explicit[pid] = where_p
            else:
                unnamed.append((len(result.paragraphs), a, i, title or None))
            result.paragraphs.append((pid or "", context))
            for q, qa in enumerate(qas):
                question = _read_question(reader, qa, f"{where_p}.qas[{q}]", context, result)
                if question is not None:
                    result.questions.append(question)
                    slots.append(len(result.paragraphs) - 1)
        article_slots.append((str(key) if key not in (None, "") else f"a{a}", title or "",
                              range(first_slot, len(result.paragraphs))))
    ids = _number_paragraphs(unnamed, set(explicit))
    result.paragraphs = [(pid or ids[slot], text)
                         for slot, (pid, text) in enumerate(result.paragraphs)]
    seen_keys: set[str] = set()
    for key, title, span in article_slots:
        while key in seen_keys:  # two articles with one id still get an article each
            key += "#"
        seen_keys.add(key)
        result.articles.append(Article(key, title, [result.paragraphs[i][0] for i in span]))
    for question, slot in zip(result.questions, slots, strict=True):
        question.paragraph_id = result.paragraphs[slot][0]
    result.fixed_offsets = sorted(set(result.fixed_offsets))
    return result


def _read_question(reader: _SquadReader, qa: Any, where: str, context: str,
                   result: SquadSet) -> Question | None:
    """One checked question of ``context`` (``None`` for an empty one, noted as skipped)."""
    qa = reader.record(qa, where, "question")
    qid = str(reader.get(qa, "id", (str, int), where, "question"))
    text = reader.get(qa, "question", str, where, "question")
    answers = reader.get(qa, "answers", [object], where, "question")
    texts: list[str] = []
    starts: list[int] = []
    fixed = False
    for n, answer in enumerate(answers):
        where_n = f"{where}.answers[{n}]"
        answer = reader.record(answer, where_n, "answer")
        answer_text = reader.get(answer, "text", str, where_n, "answer")
        given = reader.get(answer, "answer_start", int, where_n, "answer")
        if not answer_text:
            reader.fail(f"{where_n}.text is empty; an answer is a non-empty piece of the context")
        if given < -1:
            reader.fail(f"{where_n}.answer_start must be an integer ≥ 0 (a character offset "
                        f"into the context) or -1 (not located), got {given}")
        if given == -1 and answer_text not in context:
            result.dropped_answers.append(qid)  # cannot be located: keep the question only
            continue
        start = _true_start(context, answer_text, max(given, 0))
        fixed = fixed or start != given
        texts.append(answer_text)
        starts.append(start)
    if not text.strip():
        result.skipped.append(qid)
        return None
    if fixed:
        result.fixed_offsets.append(qid)
    return Question(qid, text.strip(), texts, starts, "", context)


def _number_paragraphs(unnamed: list[tuple[int, int, int, str | None]],
                       taken: set[str]) -> dict[int, str]:
    """Ids for paragraphs without one (see :func:`load_squad`), unique among ``taken``."""
    ids: dict[int, str] = {}
    base_of: dict[int, str] = {}  # article -> the stem of its paragraphs' ids
    used_titles: set[str] = set()
    for slot, a, i, title in unnamed:
        if a not in base_of:
            base = title if title is not None else f"article_{a}"
            base_of[a] = base if base not in used_titles else f"{base}#{a}"
            used_titles.add(base)
        candidate = f"{base_of[a]}_{i}"
        while candidate in taken:  # an explicit id that happens to look generated
            candidate += f"#{a}"
        taken.add(candidate)
        ids[slot] = candidate
    return ids


def _true_start(context: str, answer: str, start: int) -> int:
    if context[start:start + len(answer)] == answer:
        return start
    found = [i for i in range(len(context)) if context.startswith(answer, i)]
    if not found:
        return start  # answer not in the passage at all: keep the label as given
    return min(found, key=lambda i: abs(i - start))
