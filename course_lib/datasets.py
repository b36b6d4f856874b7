"""CMRC 2018 (and any SQuAD-format file): fetch, verify, and turn into a knowledge base.

Where the file comes from, in order:

1. a mirror folder named by ``COURSE_DATA_MIRROR`` holding ``cmrc2018/cmrc2018_trial.json``;
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

from .validation import check_int

CMRC2018_TRIAL = {
    "name": "cmrc2018/cmrc2018_trial.json",
    "url": "https://raw.githubusercontent.com/ymcui/cmrc2018/master/squad-style-data/"
           "cmrc2018_trial.json",
    "sha256": "f3fae95b57da8e03afb2b57467dd221417060ef4d82db13bf22fc88589f3a6f3",
}
MIRROR_ENV = "COURSE_DATA_MIRROR"
CACHE_ENV = "COURSE_DATA_CACHE"
SAMPLE_DIR = Path(__file__).resolve().parent.parent / "data" / "sample"


class DatasetUnavailableError(RuntimeError):
    """The data set could not be found, downloaded or verified."""


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    course_data = Path(__file__).resolve().parent.parent / "data"
    if course_data.is_dir():
        return course_data / "cache"
    return Path.home() / ".cache" / "course_lib"


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


def fetch_cmrc2018(timeout: float = 30.0) -> Path:
    """The CMRC 2018 trial set (256 paragraphs, 1,002 questions), verified."""
    return fetch(CMRC2018_TRIAL, timeout)


def _verify(path: Path, spec: dict[str, str], source: str) -> None:
    actual = sha256_of(path)
    if actual != spec["sha256"]:
        raise DatasetUnavailableError(
            f"{path} from {source} has SHA-256 {actual}, expected {spec['sha256']}: "
            "the file is damaged or a different version")


def _download(spec: dict[str, str], target: Path, timeout: float, mirror: str | None) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
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
class SquadSet:
    paragraphs: list[tuple[str, str]]  # (paragraph id, text), in file order
    questions: list[Question]
    skipped: list[str] = field(default_factory=list)  # ids of empty questions
    fixed_offsets: list[str] = field(default_factory=list)  # ids whose answer_start was off


def load_squad(path: str | os.PathLike[str]) -> SquadSet:
    """Read a SQuAD-format file: paragraphs in file order, and their questions.

    Empty questions are skipped (their ids are reported); an ``answer_start`` that
    does not point at the answer is corrected to the nearest true occurrence.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))["data"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is not a SQuAD-format JSON file ({error})") from error
    result = SquadSet([], [])
    for article in data:
        for index, paragraph in enumerate(article["paragraphs"]):
            context = paragraph["context"]
            pid = paragraph.get("id") or f"{article.get('title', 'article')}_{index}"
            result.paragraphs.append((pid, context))
            for qa in paragraph["qas"]:
                if not qa["question"].strip():
                    result.skipped.append(qa["id"])
                    continue
                texts = [a["text"] for a in qa["answers"]]
                starts = []
                for answer in qa["answers"]:
                    start = _true_start(context, answer["text"], int(answer["answer_start"]))
                    if start != answer["answer_start"]:
                        result.fixed_offsets.append(qa["id"])
                    starts.append(start)
                result.questions.append(Question(qa["id"], qa["question"].strip(), texts,
                                                 starts, pid, context))
    result.fixed_offsets = sorted(set(result.fixed_offsets))
    return result


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

    def write(self, folder: str | os.PathLike[str]) -> Path:
        """Write the files as ``.txt`` into ``folder`` (outside the repository!)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (folder / name).write_text(text, encoding="utf-8")
        return folder


def build_knowledge_base(squad: SquadSet, docs_per_file: int = 10) -> KnowledgeBase:
    """The chapter's knowledge base: paragraphs in file order, ``docs_per_file`` per file,
    joined with ``\\n`` (CMRC 2018 trial: 26 files)."""
    docs_per_file = check_int(docs_per_file, "docs_per_file", low=1)
    files: dict[str, str] = {}
    where: dict[str, tuple[str, int]] = {}
    width = len(str(len(squad.paragraphs) // docs_per_file + 1))
    for start in range(0, len(squad.paragraphs), docs_per_file):
        name = f"doc_{start // docs_per_file + 1:0{width}d}.txt"
        offset = 0
        for pid, text in squad.paragraphs[start:start + docs_per_file]:
            where[pid] = (name, offset)
            offset += len(text) + 1
        files[name] = "\n".join(text for _, text in squad.paragraphs[start:start + docs_per_file])
    for question in squad.questions:
        question.file_name, question.paragraph_offset = where[question.paragraph_id]
    return KnowledgeBase(files, squad.questions, [t for _, t in squad.paragraphs],
                         squad.skipped, squad.fixed_offsets)


def load_cmrc2018_kb(docs_per_file: int = 10) -> KnowledgeBase:
    """Fetch CMRC 2018 trial and build the chapter's 26-file knowledge base."""
    return build_knowledge_base(load_squad(fetch_cmrc2018()), docs_per_file)


# ---------------------------------------------------------------- our sample corpus
def load_sample() -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The tiny corpus written for this course: ``({file name: text}, labelled questions)``.

    Each question names its gold ``file_name`` and the ``paragraph`` that answers it.
    """
    texts = {p.name: p.read_text(encoding="utf-8")
             for p in sorted(SAMPLE_DIR.glob("*")) if p.suffix in (".txt", ".md")}
    questions = json.loads((SAMPLE_DIR / "questions.json").read_text(encoding="utf-8"))
    return texts, questions
