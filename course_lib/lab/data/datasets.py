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
from typing import Any

from ..._support.places import COURSE_ROOT, cache_dir
from ..._support.validation import check_int
from .squad import (  # noqa: F401  (offered here too: datasets.load_squad, ...)
    Article,
    DatasetFormatError,
    Question,
    SquadSet,
    load_squad,
)

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


def benchmark_results() -> dict[str, Any]:
    """What ``make bench`` measured and the course commits (``benchmarks/results.json``): read
    from the course folder, so that a notebook finds it wherever it runs — a learner's clone,
    an assignment fetched into a student's home, a graded run.

    >>> sorted(benchmark_results())[:1]
    ['bm25']
    """
    path = COURSE_ROOT / "benchmarks" / "results.json"
    return json.loads(path.read_text(encoding="utf-8"))

