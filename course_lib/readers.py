"""Readers: files (or given texts) become root nodes, with file metadata.

A reader is a function registered for a file suffix; ``.txt`` and ``.md`` are read as
UTF-8 by :func:`text_reader`. Register your own for other formats or encodings::

    register_reader(".csv", lambda path: path.read_text(encoding="utf-8").replace(",", " | "))
    register_reader(".txt", text_reader("gbk"))      # a corpus saved in GBK

A reader returns the file's text (one root node, uid: the file's name) or a list of
parts — strings or :class:`~course_lib.node.DocNode` s with their own ``metadata`` —
one root node each (uids ``name#0``, ``name#1``, ...): a CSV of FAQ rows can become
one node per row, each row's columns in its metadata. A returned DocNode keeps its
class (a QA node stays one); its metadata is added to the file's.

Every root node carries metadata — ``file_name``, ``file_path``, ``file_type``,
``file_size``, ``modified``, ``created`` — which every node cut from it inherits
(what ``Retriever(filters={"file_name": [...]})`` looks at). This module does not cut
text into smaller nodes; node groups do (:mod:`course_lib.document`).

What is read, and what is refused — the file rules (regular files only, no symlink leaving
the folder, at most :data:`MAX_FILE_BYTES` per file) are stated and checked once, in
:mod:`course_lib._support.file_rules`; a file that breaks one is skipped with a warning
naming it when a folder holds it, and an error when ``files=`` names it. This module adds:

- **Text only.** A file that is not valid UTF-8 (GBK, Latin-1, a binary file) raises a
  ``UnicodeDecodeError`` whose message names the file and what to do; a NUL byte (a
  binary or UTF-16 file) is a ``ValueError``. A lone surrogate (``"\\ud800"``, possible
  in ``texts=`` or from your own reader) is refused naming the document and position.
- **A non-empty knowledge base.** An empty ``texts=`` or ``files=``, an empty
  ``dataset_path`` (``""`` would mean the current folder) and a folder with nothing to
  read are errors.

>>> [(n.uid, n.text, n.metadata["file_type"]) for n in read_roots(texts={"a": "甲。"})]
[('a', '甲。', 'text')]
>>> read_roots(texts="长城很长。")
Traceback (most recent call last):
...
TypeError: texts= got a single str; give a list of strings (texts=['...']) or a {name: text} dict
"""

from __future__ import annotations

import codecs
import dataclasses
import datetime as dt
import os
import stat
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._support import file_rules
from ._support.validation import check_text
from .node import DocNode

ROOT = "root"

MAX_FILE_BYTES = 50 * 2**20
"""The largest file (in bytes) a reader accepts: 50 MiB. Read at call time, so
``course_lib.readers.MAX_FILE_BYTES = ...`` changes it for every later read."""

Reader = Callable[[Path], str | list[str | DocNode]]


# ---------------------------------------------------------------- reading one file
_KNOB = "course_lib.readers.MAX_FILE_BYTES"


def check_size(path: Path, size: int) -> None:
    """``ValueError`` naming ``path``, its ``size`` and the limit if ``size`` exceeds
    :data:`MAX_FILE_BYTES`."""
    file_rules.check_size(path, size, MAX_FILE_BYTES, _KNOB)


def read_limited(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path``, refusing more than :data:`MAX_FILE_BYTES`
    (:func:`course_lib._support.file_rules.read_limited`: checked on the open file, opened
    without blocking, read at most one byte past the limit). Use it in your own readers to
    get the same guarantees."""
    return file_rules.read_limited(path, MAX_FILE_BYTES, _KNOB)


def _decode_error(path: Path, error: UnicodeDecodeError) -> UnicodeDecodeError:
    """``error`` again, its message naming the file and what to do."""
    suffix = path.suffix.lower() or "''"
    reason = (f"{error.reason} — file {str(path)!r} is not {error.encoding} text (another "
              f"encoding such as GBK, or not text at all): convert it to UTF-8 (e.g. iconv -f "
              f"GBK -t UTF-8), remove it if it is binary, or read it with its encoding: "
              f"register_reader({suffix!r}, course_lib.readers.text_reader('gbk'))")
    return UnicodeDecodeError(error.encoding, error.object, error.start, error.end, reason)


def text_reader(encoding: str = "utf-8") -> Reader:
    """A reader for plain-text files in ``encoding`` (the ``.txt``/``.md`` reader is
    ``text_reader("utf-8")``).

    It reads through :func:`read_limited` (regular files, size limit), decodes strictly
    — a byte that is not ``encoding`` raises a ``UnicodeDecodeError`` naming the file —
    and refuses a NUL byte, the mark of a binary or UTF-16 file. It does not strip a
    byte-order mark or normalise line ends.

    >>> text_reader("no-such-codec")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: text_reader: unknown encoding 'no-such-codec'; give one Python knows, e.g. ...
    """
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ValueError(f"text_reader: unknown encoding {encoding!r}; give one Python knows, "
                         "e.g. 'utf-8' or 'gbk'") from None

    def read(path: Path) -> str:
        data = read_limited(path)
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as error:
            raise _decode_error(Path(path), error) from None
        nul = text.find("\0")
        if nul >= 0:
            raise ValueError(f"file {str(path)!r} holds a NUL character at position {nul}: it "
                             f"looks binary (or UTF-16), not {encoding} text; remove it from "
                             "the corpus or convert it to UTF-8")
        return text

    read.__name__ = read.__qualname__ = f"text_reader({encoding!r})"
    return read


READERS: dict[str, Reader] = {".txt": text_reader("utf-8"), ".md": text_reader("utf-8")}


def register_reader(suffix: str, reader: Reader) -> None:
    """Read files ending in ``suffix`` (e.g. ``".csv"``) with ``reader(path)``, which
    returns the text, or a list of strings / DocNodes (one root node each).

    Replaces the reader already registered for ``suffix``. The file has passed the
    checks above (regular, inside the folder, within :data:`MAX_FILE_BYTES`) before
    ``reader`` sees it; use :func:`read_limited` inside it to also bound the reading.
    """
    if not isinstance(suffix, str) or not suffix.startswith("."):
        raise ValueError(f"suffix must be a string starting with '.', e.g. '.csv'; got {suffix!r}")
    if not callable(reader):
        raise TypeError(f"reader for {suffix!r} must be a function path -> text, got "
                        f"{type(reader).__name__}")
    READERS[suffix.lower()] = reader


def file_metadata(path: Path) -> dict[str, Any]:
    """What a root node read from ``path`` knows about its file."""
    info = path.stat()
    return {
        "file_name": path.name,
        "file_path": str(path),
        "file_type": path.suffix.lstrip("."),
        "file_size": info.st_size,
        "modified": dt.datetime.fromtimestamp(info.st_mtime).isoformat(timespec="seconds"),
        "created": dt.datetime.fromtimestamp(info.st_ctime).isoformat(timespec="seconds"),
    }


# ---------------------------------------------------------------- choosing the files
def _folder_paths(dataset_path: Any) -> tuple[Path, list[Path]]:
    if not isinstance(dataset_path, (str, os.PathLike)):
        hint = ("for {name: text} use texts=" if isinstance(dataset_path, Mapping)
                else "to read given files use files=[...]")
        raise TypeError(f"dataset_path must be a folder path (str or pathlib.Path), got "
                        f"{type(dataset_path).__name__}; {hint}")
    if not os.fspath(dataset_path):
        raise ValueError("dataset_path is empty (''), which would read the current folder and "
                         "everything under it: name the folder to read, e.g. "
                         "Document('my_corpus') (or '.' if you really mean the current folder)")
    folder = Path(dataset_path)
    if folder.is_file():
        raise NotADirectoryError(f"dataset_path {str(folder)!r} is a file, not a folder: give "
                                 f"the folder that holds it, or files=[{str(folder)!r}]")
    if not folder.is_dir():
        where = "" if folder.is_absolute() else f" (relative paths start at {os.getcwd()!r})"
        raise FileNotFoundError(f"dataset_path {str(folder)!r} is not a folder: it does not "
                                f"exist{where}; give an existing folder")
    paths, skipped = file_rules.scan_folder(folder,
                                            lambda p: p.suffix.lower() in READERS)
    shown = "; ".join(skipped[:10]) + (f"; and {len(skipped) - 10} more" if len(skipped) > 10
                                       else "")
    if not paths:
        raise ValueError(f"dataset_path {str(folder)!r} holds no readable files (known "
                         f"suffixes: {sorted(READERS)}; see register_reader)"
                         + (f"; skipped: {shown}" if skipped else ""))
    if skipped:
        warnings.warn(f"dataset_path {str(folder)!r}: skipped {len(skipped)} path(s): {shown}. "
                      "Readers take regular files inside the folder only.", stacklevel=4)
    for path in paths:
        check_size(path, path.stat().st_size)
    return folder, paths


def _given_paths(files: Any) -> list[Path]:
    if isinstance(files, (str, bytes, os.PathLike)):
        raise TypeError(f"files= must be a list of file paths, got a single "
                        f"{type(files).__name__} {os.fsdecode(files)!r}: write "
                        f"files=[{os.fsdecode(files)!r}] (or Document('folder') to read a folder)")
    if isinstance(files, Mapping) or not isinstance(files, Iterable):
        hint = "; for {name: text} use texts=" if isinstance(files, Mapping) else ""
        raise TypeError(f"files= must be a list of file paths (str or pathlib.Path), got "
                        f"{type(files).__name__}{hint}")
    paths = []
    for i, item in enumerate(files):
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"files=[...] item {i} is {type(item).__name__} {item!r:.40}; "
                            "give file paths (str or pathlib.Path)")
        if not os.fspath(item):
            raise ValueError(f"files=[...] item {i} is an empty path; give a file path")
        paths.append(Path(item))
    if not paths:
        raise ValueError("files= is empty: give at least one file path (a knowledge base needs "
                         "at least one document)")
    seen: set[str] = set()
    for path in paths:
        if str(path) in seen:
            raise ValueError(f"files= names {str(path)!r} twice; give each file once")
        seen.add(str(path))
        _check_given_file(path)
    return paths


def _check_given_file(path: Path) -> None:
    """A path named in ``files=`` must exist, be a regular file within the size limit and
    have a reader."""
    try:
        info = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise FileNotFoundError(f"files=: {str(path)!r} is a broken symlink (its target "
                                    f"{os.readlink(path)!r} does not exist)") from None
        where = "" if path.is_absolute() else f" (relative paths start at {os.getcwd()!r})"
        raise FileNotFoundError(f"files=: {str(path)!r} does not exist{where}; give existing "
                                "files") from None
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(f"files=: {str(path)!r} is a folder; read it with "
                                f"Document({str(path)!r}), or list its files")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"files=: {str(path)!r} is {file_rules.file_kind(info.st_mode)}; "
                         "readers read regular files only")
    if path.suffix.lower() not in READERS:
        raise ValueError(f"no reader for {path.name!r}; known suffixes: "
                         f"{sorted(READERS)} (add one with register_reader)")
    check_size(path, info.st_size)


# ---------------------------------------------------------------- root nodes
def read_roots(dataset_path: str | os.PathLike[str] | None = None, *,
               files: Iterable[str | os.PathLike[str]] | None = None,
               texts: Sequence[str] | Mapping[str, str] | None = None) -> list[DocNode]:
    """One root node per file of ``dataset_path`` (read recursively), per path in
    ``files``, or per text in ``texts`` (a list, or ``{name: text}``). Give exactly one.

    Every path is checked before any file is read (see the module docstring for what
    is refused); nothing is cached or written.
    """
    sources = [s is not None for s in (dataset_path, files, texts)]
    if sum(sources) != 1:
        raise ValueError("give exactly one of dataset_path=, files= or texts=")
    if texts is not None:
        return _roots_from_texts(texts)
    if dataset_path is not None:
        folder, paths = _folder_paths(dataset_path)
    else:
        folder, paths = None, _given_paths(files)
    roots = []
    for path in paths:
        uid = str(path.relative_to(folder)) if folder is not None else str(path)
        metadata = file_metadata(path)
        read = _read_one(path)
        if isinstance(read, str):
            roots.append(DocNode(read, group=ROOT, uid=uid, metadata=metadata))
            continue
        for i, part in enumerate(read):
            # A fresh node of the part's class: the reader's own object is not reused.
            roots.append(dataclasses.replace(part, group=ROOT, uid=f"{uid}#{i}", parent=None,
                                             children={}, embeddings={}, score=None,
                                             metadata={**metadata, **part.metadata}))
    return roots


def _read_one(path: Path) -> str | list[DocNode]:
    """What ``path``'s reader makes of it — its text, or its parts as DocNodes — checked:
    strings of valid Unicode, a non-empty list, no global metadata on a part."""
    suffix = path.suffix.lower()
    reader = READERS[suffix]
    try:
        text = reader(path)
    except UnicodeDecodeError as error:
        if str(path) in str(error):
            raise
        raise _decode_error(path, error) from None
    except Exception as error:
        if str(path) not in str(error):
            error.add_note(f"while reading {str(path)!r} with the reader for {suffix!r}")
        raise
    if isinstance(text, str):
        check_text(text, f"file {str(path)!r}")
        return text
    must = ("a reader must return the file's text as a str, or a list of parts (str or "
            "DocNode), one root node each")
    if not isinstance(text, (list, tuple)):
        raise TypeError(f"the reader for {suffix!r} returned {type(text).__name__} for "
                        f"{str(path)!r}; {must}")
    if not text:
        raise ValueError(f"the reader for {suffix!r} returned an empty list for {str(path)!r}; "
                         f"{must} (return '' for a file with no text)")
    parts = []
    for i, part in enumerate(text):
        where = f"part {i} of {str(path)!r} (reader for {suffix!r})"
        if isinstance(part, str):
            part = DocNode(part)
        elif not isinstance(part, DocNode):
            raise TypeError(f"{where} is {type(part).__name__} {part!r:.40}; {must}")
        if not isinstance(part.text, str):
            raise TypeError(f"{where} is a DocNode whose text is {type(part.text).__name__}; "
                            f"{must}")
        if part.global_metadata:
            raise ValueError(f"{where} carries global_metadata {part.global_metadata!r:.60}; "
                             "global_metadata belongs to the whole Document (Document(..., "
                             "global_metadata=...)): put facts about this part in its metadata")
        check_text(part.text, where)
        parts.append(part)
    return parts


def _roots_from_texts(texts: Any) -> list[DocNode]:
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError(f"texts= got a single {type(texts).__name__}; give a list of strings "
                        "(texts=['...']) or a {name: text} dict")
    if isinstance(texts, Mapping):
        items = list(texts.items())
    elif isinstance(texts, (set, frozenset)):
        raise TypeError("texts= got a set, which has no order (names text_0, text_1, ... would "
                        "change from run to run): give a list of strings or a {name: text} dict")
    elif isinstance(texts, Iterable):
        items = [(f"text_{i}", t) for i, t in enumerate(texts)]
    else:
        raise TypeError(f"texts= must be a list of strings or a {{name: text}} dict, got "
                        f"{type(texts).__name__}")
    if not items:
        raise ValueError("texts= is empty: give at least one text (a knowledge base needs at "
                         "least one document)")
    roots = []
    for name, text in items:
        if not isinstance(name, str):
            raise TypeError(f"texts= names must be strings, got {type(name).__name__} {name!r:.40}"
                            "; use a {'name.txt': text} dict, or a list of strings")
        if not name:
            raise ValueError("texts= holds an empty name (''); give every text a name")
        if not isinstance(text, str):
            raise TypeError(f"texts must hold strings, got {type(text).__name__} for {name!r}")
        check_text(text, f"texts[{name!r}]")
        roots.append(DocNode(text, group=ROOT, uid=name,
                             metadata={"file_name": name, "file_type": "text",
                                       "file_size": len(text.encode("utf-8"))}))
    return roots
