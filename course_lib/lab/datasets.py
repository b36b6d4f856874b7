"""CMRC 2018 (and any SQuAD-format file): fetch, verify, and turn into a knowledge base.

Where the file comes from, in order:

1. a mirror folder named by ``COURSE_DATA_MIRROR`` holding ``cmrc2018/cmrc2018_trial.json``
   (and ``cmrc2018_dev.json`` for the dev split);
2. the cache (``COURSE_DATA_CACHE``, default ``data/cache`` in the course folder, or
   ``~/.cache/course_lib`` for an installed library);
3. the public URL, downloaded to a temporary file, checked against its SHA-256, and
   only then moved into the cache — a failed download leaves nothing behind.

The data is CC BY-SA 4.0 (Cui et al., 2019) and is never committed to this repository.

>>> kb = build_knowledge_base(load_squad(fetch_cmrc2018()))   # doctest: +SKIP
>>> len(kb.files), len(kb.questions)                           # doctest: +SKIP
(26, 1000)
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from .._support.places import COURSE_ROOT, cache_dir
from .._support.validation import check_int, find_surrogate
from ..store.json_shape import problem, type_name

CMRC2018_TRIAL = {
    "name": "cmrc2018/cmrc2018_trial.json",
    "url": "https://raw.githubusercontent.com/ymcui/cmrc2018/master/squad-style-data/"
           "cmrc2018_trial.json",
    "sha256": "f3fae95b57da8e03afb2b57467dd221417060ef4d82db13bf22fc88589f3a6f3",
}
# The public dev set: never looked at while the course's settings were chosen, so it is
# where they are reported (choose on trial, report on dev).
CMRC2018_DEV = {
    "name": "cmrc2018/cmrc2018_dev.json",
    "url": "https://raw.githubusercontent.com/ymcui/cmrc2018/master/squad-style-data/"
           "cmrc2018_dev.json",
    "sha256": "e9ff74231f05c230c6fa88b84441ee334d97234cbb610991cd94b82db00c7f1f",
}
SPLITS = {"trial": CMRC2018_TRIAL, "dev": CMRC2018_DEV}
# DRCD (Shao et al., 2018): Traditional Chinese Wikipedia from Taiwan, 378 articles of 2.6
# paragraphs on average (CMRC's articles hold one paragraph each), CC BY-SA 3.0.
DRCD_TEST = {
    "name": "drcd/DRCD_test.json",
    "url": "https://raw.githubusercontent.com/DRCKnowledgeTeam/DRCD/master/DRCD_test.json",
    "sha256": "d9de0b4d247a8391ac8daee6c02c2c8272b75562a1e2377b50ae04ecc09a7438",
}
MIRROR_ENV = "COURSE_DATA_MIRROR"
SAMPLE_DIR = COURSE_ROOT / "data" / "sample"


class DatasetUnavailableError(RuntimeError):
    """The data set could not be found, downloaded or verified."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(spec: dict[str, str] = CMRC2018_TRIAL, timeout: float = 30.0) -> Path:
    """Path to a verified local copy of ``spec`` (mirror, then cache, then download)."""
    mirror = os.environ.get(MIRROR_ENV)
    if mirror:
        candidate = Path(mirror) / spec["name"]
        if candidate.is_file():
            _verify(candidate, spec, source=f"the mirror {MIRROR_ENV}={mirror}")
            return candidate
    target = cache_dir() / spec["name"]
    if target.is_file():
        _verify(target, spec, source="the cache (delete it to download again)")
        return target
    return _download(spec, target, timeout, mirror)


def fetch_cmrc2018(timeout: float = 30.0, split: str = "trial") -> Path:
    """A verified CMRC 2018 file: ``split="trial"`` (256 paragraphs, 1,002 questions; the
    chapter's) or ``"dev"`` (848 paragraphs, 3,219 questions; the held-out split)."""
    return fetch(SPLITS[_check_split(split)], timeout)


def fetch_drcd(timeout: float = 30.0) -> Path:
    """A verified DRCD test file (378 articles, 1,000 paragraphs, 3,493 questions;
    Traditional Chinese)."""
    return fetch(DRCD_TEST, timeout)


def _check_split(split: object) -> str:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, SPLITS))}, got {split!r}")
    return split  # type: ignore[return-value]


def _verify(path: Path, spec: dict[str, str], source: str) -> None:
    actual = sha256_of(path)
    if actual != spec["sha256"]:
        raise DatasetUnavailableError(
            f"{path} from {source} has SHA-256 {actual}, expected {spec['sha256']}: "
            "the file is damaged or a different version")


def _download(spec: dict[str, str], target: Path, timeout: float, mirror: str | None) -> Path:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    except OSError as error:  # a shared server's read-only cache, not yet filled
        raise DatasetUnavailableError(
            f"the data cache {target.parent} holds no {spec['name']} and cannot be written "
            f"({error.strerror}): on a shared server the teacher fills it once with `make "
            f"data`; or set {MIRROR_ENV} to a folder that holds {spec['name']}") from error
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(spec["url"],
                                                                timeout=timeout) as response:
            while block := response.read(1 << 20):
                out.write(block)
        _verify(tmp, spec, source=spec["url"])
        os.replace(tmp, target)  # atomic: the cache holds a whole, verified file or none
        return target
    except (urllib.error.URLError, OSError, DatasetUnavailableError) as error:
        where = f"{MIRROR_ENV}={mirror} has no {spec['name']}; " if mirror else ""
        raise DatasetUnavailableError(
            f"could not get {spec['name']}: {where}download from {spec['url']} failed "
            f"({error}). Fix: connect to the internet, or set {MIRROR_ENV} to a folder that "
            f"holds {spec['name']}, or copy the file to {target}.") from error
    finally:
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------- SQuAD format
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


# ---------------------------------------------------------------- knowledge base
@dataclass
class KnowledgeBase:
    files: dict[str, str]  # file name -> text (paragraphs joined with "\n")
    questions: list[Question]
    paragraphs: list[str]
    skipped: list[str]
    fixed_offsets: list[str]
    dropped_answers: list[str] = field(default_factory=list)  # see SquadSet

    def write(self, folder: str | os.PathLike[str]) -> Path:
        """Write the files as ``.txt`` into ``folder`` (outside the repository!)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (folder / name).write_text(text, encoding="utf-8")
        return folder


def build_knowledge_base(squad: SquadSet, docs_per_file: int = 10,
                         groups: list[tuple[str, list[str]]] | None = None) -> KnowledgeBase:
    """The chapter's knowledge base: paragraphs in file order, ``docs_per_file`` per file,
    joined with ``\\n`` (CMRC 2018 trial: 26 files). ``groups`` — ``[(file name, paragraph
    ids)]`` — names each file's paragraphs instead (:func:`build_article_knowledge_base`).

    Each question learns its file and where its paragraph starts there. Raises
    ``ValueError`` when two paragraphs share an id or a question names an id that is
    not there (a hand-made :class:`SquadSet`; :func:`load_squad` never gives one).
    """
    docs_per_file = check_int(docs_per_file, "docs_per_file", low=1)
    known: set[str] = set()
    for pid, _ in squad.paragraphs:
        if pid in known:
            raise ValueError(f"squad.paragraphs has the id {pid!r} more than once: each "
                             "paragraph needs its own id (load_squad numbers them so)")
        known.add(pid)
    unknown = [q.id for q in squad.questions if q.paragraph_id not in known]
    if unknown:
        raise ValueError(f"question {unknown[0]!r} names a paragraph_id that is not among "
                         "squad.paragraphs: every question must point at one of them")
    if groups is None:
        ids = [pid for pid, _ in squad.paragraphs]
        width = len(str(len(ids) // docs_per_file + 1))
        groups = [(f"doc_{start // docs_per_file + 1:0{width}d}.txt",
                   ids[start:start + docs_per_file])
                  for start in range(0, len(ids), docs_per_file)]
    text_of = dict(squad.paragraphs)
    files: dict[str, str] = {}
    where: dict[str, tuple[str, int]] = {}
    for name, pids in groups:
        if name in files:
            raise ValueError(f"groups names the file {name!r} twice")
        offset = 0
        for pid in pids:
            where[pid] = (name, offset)
            offset += len(text_of[pid]) + 1
        files[name] = "\n".join(text_of[pid] for pid in pids)
    if len(where) != len(text_of):
        raise ValueError("groups must place every paragraph of squad in exactly one file")
    for question in squad.questions:
        question.file_name, question.paragraph_offset = where[question.paragraph_id]
    return KnowledgeBase(files, squad.questions, [t for _, t in squad.paragraphs],
                         squad.skipped, squad.fixed_offsets, squad.dropped_answers)


def load_cmrc2018_kb(docs_per_file: int = 10, split: str = "trial",
                     paragraphs: int | None = None) -> KnowledgeBase:
    """Fetch CMRC 2018 and build the chapter's knowledge base from it.

    ``split="trial"`` gives the chapter's 26 files (256 paragraphs, 1,000 questions);
    ``"dev"`` the held-out split, built the same way (848 paragraphs in 85 files, 3,219
    questions). ``paragraphs=n`` keeps only the first ``n`` paragraphs of the file, in
    file order, and their questions: the course's held-out set is ``split="dev",
    paragraphs=256`` (:data:`HELD_OUT`), the trial set's size, so that a number moves
    between trial and dev because the questions are new, not because the knowledge
    base is three times larger.

    >>> kb = load_cmrc2018_kb(split="dev", paragraphs=256)   # doctest: +SKIP
    >>> len(kb.files), len(kb.paragraphs)                      # doctest: +SKIP
    (26, 256)
    """
    squad = load_squad(fetch_cmrc2018(split=split))
    if paragraphs is not None:
        paragraphs = check_int(paragraphs, "paragraphs", low=1)
        squad = keep_paragraphs(squad, {pid for pid, _ in squad.paragraphs[:paragraphs]})
    return build_knowledge_base(squad, docs_per_file)


def keep_paragraphs(squad: SquadSet, kept: set[str]) -> SquadSet:
    """The part of ``squad`` whose paragraph ids are in ``kept``: those paragraphs (in file
    order), their questions, their articles, and the repairs counted for the questions
    kept (a skipped empty question has no paragraph to follow, so every one is kept).

    >>> squad = SquadSet([("p1", "甲"), ("p2", "乙")], [],
    ...                  articles=[Article("1", "t", ["p1", "p2"])])
    >>> part = keep_paragraphs(squad, {"p2"})
    >>> part.paragraphs, part.articles
    ([('p2', '乙')], [Article(key='1', title='t', paragraph_ids=['p2'])])
    """
    questions = [q for q in squad.questions if q.paragraph_id in kept]
    ids = {q.id for q in questions}
    articles = [Article(a.key, a.title, [p for p in a.paragraph_ids if p in kept])
                for a in squad.articles]
    return SquadSet([(pid, text) for pid, text in squad.paragraphs if pid in kept], questions,
                    list(squad.skipped), [i for i in squad.fixed_offsets if i in ids],
                    [i for i in squad.dropped_answers if i in ids],
                    [a for a in articles if a.paragraph_ids])


# The course's held-out set: choose a setting on trial, report it here.
HELD_OUT = {"split": "dev", "paragraphs": 256}


def load_held_out_kb() -> KnowledgeBase:
    """The first 256 paragraphs of CMRC 2018 dev as a knowledge base (26 files, like
    trial's): where the course reports every setting it chose on trial."""
    return load_cmrc2018_kb(**HELD_OUT)  # type: ignore[arg-type]


# ---------------------------------------------------------------- halves by article
HALVES = ("choose", "report")


def article_half(key: str) -> str:
    """Which half an article belongs to: ``"choose"`` or ``"report"``, from the first
    byte of the SHA-256 of its key (even: choose). Fixed by the key alone, so the
    split needs no seed, does not move when other articles are added or removed, and
    sends every paragraph of an article to the same half (siblings never straddle it).

    >>> article_half("1147"), article_half("1148")
    ('report', 'choose')
    """
    return HALVES[hashlib.sha256(str(key).encode("utf-8")).digest()[0] % 2]


def split_by_article(squad: SquadSet, half: str) -> SquadSet:
    """The articles of ``squad`` in ``half`` (``"choose"`` or ``"report"``, see
    :func:`article_half`), with their paragraphs and questions: settings are chosen on
    one half and reported on the other, and no article has paragraphs in both.
    """
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, got {half!r}")
    if not squad.articles:
        raise ValueError("squad has no articles to split by (a SquadSet made by hand? "
                         "load_squad records them)")
    kept = {pid for a in squad.articles if article_half(a.key) == half for pid in a.paragraph_ids}
    return keep_paragraphs(squad, kept)


def load_drcd(half: str | None = None) -> SquadSet:
    """DRCD test (Traditional Chinese): all of it, or one half by article
    (``half="choose"`` or ``"report"``, :func:`split_by_article`).

    >>> drcd = load_drcd()                                   # doctest: +SKIP
    >>> len(drcd.articles), len(drcd.paragraphs), len(drcd.questions)   # doctest: +SKIP
    (378, 1000, 3493)
    """
    squad = load_squad(fetch_drcd())
    return squad if half is None else split_by_article(squad, half)


def build_article_knowledge_base(squad: SquadSet) -> KnowledgeBase:
    """Articles as files: one file per article, its paragraphs in order joined with
    ``\\n``, named ``<key>_<title>.txt`` — a user's knowledge base of whole documents.
    Gold stays the paragraph that holds the answer; each question learns its file and
    where its paragraph starts there (so answer-span recall works on any chunking).

    >>> squad = SquadSet([("1-1", "甲。"), ("1-2", "乙。")], [],
    ...                  articles=[Article("1", "标题/一", ["1-1", "1-2"])])
    >>> build_article_knowledge_base(squad).files
    {'1_标题_一.txt': '甲。\\n乙。'}
    """
    if not squad.articles:
        raise ValueError("squad has no articles (load_squad records them)")
    return build_knowledge_base(squad, groups=[
        (f"{a.key}_{_file_safe(a.title)}.txt", a.paragraph_ids) for a in squad.articles])


def _file_safe(title: str) -> str:
    return "".join("_" if ch in '/\\:*?"<>|\0' or ch.isspace() else ch for ch in title)[:60]


def merge_squads(*squads: SquadSet) -> SquadSet:
    """Several sets as one (paragraphs, questions, articles and repairs in the order given):
    one knowledge base holding both corpora. Paragraph and article ids must not collide.

    >>> a = SquadSet([("p1", "甲")], [], articles=[Article("1", "", ["p1"])])
    >>> b = SquadSet([("q1", "乙")], [], articles=[Article("2", "", ["q1"])])
    >>> [pid for pid, _ in merge_squads(a, b).paragraphs]
    ['p1', 'q1']
    """
    merged = SquadSet([], [])
    for squad in squads:
        merged.paragraphs += squad.paragraphs
        merged.questions += squad.questions
        merged.skipped += squad.skipped
        merged.fixed_offsets += squad.fixed_offsets
        merged.dropped_answers += squad.dropped_answers
        merged.articles += squad.articles
    for what, ids in (("paragraph", [pid for pid, _ in merged.paragraphs]),
                      ("article", [a.key for a in merged.articles])):
        if len(set(ids)) != len(ids):
            repeated = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"the sets share the {what} id {repeated!r}: ids must be unique "
                             "across the sets merged")
    return merged


# ---------------------------------------------------------------- our sample corpus
def load_sample() -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The tiny corpus written for this course: ``({file name: text}, labelled questions)``.

    Each question names its gold ``file_name`` and the ``paragraph`` that answers it.
    """
    texts = {p.name: p.read_text(encoding="utf-8")
             for p in sorted(SAMPLE_DIR.glob("*")) if p.suffix in (".txt", ".md")}
    questions = json.loads((SAMPLE_DIR / "questions.json").read_text(encoding="utf-8"))
    return texts, questions
