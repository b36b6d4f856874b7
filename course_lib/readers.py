"""Readers: files (or given texts) become root nodes, one per file, with file metadata.

A reader is a function ``path -> text`` registered for a file suffix; ``.txt`` and
``.md`` are read as UTF-8. Register your own for other formats::

    register_reader(".csv", lambda path: path.read_text(encoding="utf-8").replace(",", " | "))

Every root node carries metadata — ``file_name``, ``file_path``, ``file_type``,
``file_size``, ``modified``, ``created`` — which every node cut from it inherits
(what ``Retriever(filters={"file_name": [...]})`` looks at). This module does not cut
text into smaller nodes; node groups do (:mod:`course_lib.document`).

>>> [(n.uid, n.text, n.metadata["file_type"]) for n in read_roots(texts={"a": "甲。"})]
[('a', '甲。', 'text')]
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .node import DocNode

ROOT = "root"


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


READERS: dict[str, Callable[[Path], str]] = {".txt": _read_text, ".md": _read_text}


def register_reader(suffix: str, reader: Callable[[Path], str]) -> None:
    """Read files ending in ``suffix`` (e.g. ``".csv"``) with ``reader(path) -> text``."""
    if not suffix.startswith("."):
        raise ValueError(f"suffix must start with '.', got {suffix!r}")
    READERS[suffix.lower()] = reader


def file_metadata(path: Path) -> dict[str, Any]:
    """What a root node read from ``path`` knows about its file."""
    stat = path.stat()
    return {
        "file_name": path.name,
        "file_path": str(path),
        "file_type": path.suffix.lstrip("."),
        "file_size": stat.st_size,
        "modified": dt.datetime.fromtimestamp(stat.st_mtime).isoformat(timespec="seconds"),
        "created": dt.datetime.fromtimestamp(stat.st_ctime).isoformat(timespec="seconds"),
    }


def read_roots(dataset_path: str | os.PathLike[str] | None = None, *,
               files: Iterable[str | os.PathLike[str]] | None = None,
               texts: Sequence[str] | dict[str, str] | None = None) -> list[DocNode]:
    """One root node per file of ``dataset_path`` (read recursively), per path in
    ``files``, or per text in ``texts`` (a list, or ``{name: text}``). Give exactly one."""
    sources = [s is not None for s in (dataset_path, files, texts)]
    if sum(sources) != 1:
        raise ValueError("give exactly one of dataset_path=, files= or texts=")
    if texts is not None:
        return _roots_from_texts(texts)
    if dataset_path is not None:
        folder = Path(dataset_path)
        if not folder.is_dir():
            raise FileNotFoundError(f"dataset_path {str(folder)!r} is not a folder")
        paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in READERS)
        if not paths:
            raise ValueError(f"dataset_path {str(folder)!r} holds no readable files "
                             f"(known suffixes: {sorted(READERS)}; see register_reader)")
    else:
        paths = [Path(p) for p in files]
    roots = []
    for path in paths:
        reader = READERS.get(path.suffix.lower())
        if reader is None:
            raise ValueError(f"no reader for {path.name!r}; known suffixes: "
                             f"{sorted(READERS)} (add one with register_reader)")
        uid = str(path.relative_to(dataset_path)) if dataset_path is not None else str(path)
        roots.append(DocNode(reader(path), group=ROOT, uid=uid, metadata=file_metadata(path)))
    return roots


def _roots_from_texts(texts: Sequence[str] | dict[str, str]) -> list[DocNode]:
    items = texts.items() if isinstance(texts, dict) else (
        (f"text_{i}", t) for i, t in enumerate(texts))
    roots = []
    for name, text in items:
        if not isinstance(text, str):
            raise TypeError(f"texts must hold strings, got {type(text).__name__} for {name!r}")
        roots.append(DocNode(text, group=ROOT, uid=name,
                             metadata={"file_name": name, "file_type": "text",
                                       "file_size": len(text.encode("utf-8"))}))
    return roots
