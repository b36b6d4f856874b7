"""The files of a saved folder: each written with its SHA-256, each read back trusting nothing.

A save writes every file through :class:`NewFiles`, which flushes it to disk and keeps
its checksum; the caller lists those checksums in ``manifest.json``, written last. A
load reads every file through :class:`SavedFiles`, which

* reads only a file the manifest lists, under a plain name that can only mean a file
  directly inside the folder (no ``/``, ``\\``, ``:``, ``..``, leading ``.``, absolute
  path or symbolic link);
* compares its bytes with the listed checksum, and only then parses them — numpy and
  scipy arrays without pickles (``allow_pickle=False``), JSON lines split on ``\\n``;
* raises :class:`PersistError` naming the file and the reason for anything wrong.

What is not promised: checksums detect damage, not forgery — whoever can write the
folder can write a matching manifest. Reading such a folder still reads nothing outside
it and runs no code, but its contents are whatever it says. Files are read whole into
memory.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     out = NewFiles(Path(folder))
...     out.json("words.json", ["长城", "茶"])
...     SavedFiles(Path(folder), Path("kb"), out.sha256).json("words.json", shape=[str])
['长城', '茶']
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from . import json_shape, safe_folder

MANIFEST = "manifest.json"
_RESERVED = (MANIFEST, safe_folder.INCOMPLETE)  # names a listed file cannot have
_NOT_PLAIN = "not a plain file name inside the folder (no '/', '\\', ':', or leading '.')"


class PersistError(RuntimeError):
    """A saved knowledge base cannot be used as it is (and should be rebuilt)."""


def check_shape(value: Any, shape: Any, where: str, shown: Path | str) -> None:
    """Raise :class:`PersistError` naming the file ``shown`` unless ``value`` has
    ``shape`` (see :mod:`course_lib.store.json_shape`)."""
    problem = json_shape.problem(value, shape, where)
    if problem:
        raise PersistError(f"{shown} is malformed: {problem}")


def is_plain_name(name: str) -> bool:
    """A file name that can only mean a file directly inside the folder: no path
    separators or drive colon, not ``.``/``..`` or any other name starting with a dot."""
    return bool(name) and not name.startswith(".") and not any(c in name for c in "/\\:\0")


def read_inside(folder: Path, name: str, shown: Path) -> bytes:
    """The bytes of the regular file ``name`` directly inside ``folder``.

    :class:`PersistError` if the name could point elsewhere (``../x``, ``/etc/x``,
    ``sub/x``), or the file is missing, a symbolic link or not a regular file.
    """
    if not is_plain_name(name):
        raise PersistError(f"{shown}: {name!r} is {_NOT_PLAIN}")
    path = folder / name
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise PersistError(f"{shown} is missing") from None
    if stat.S_ISLNK(mode):
        raise PersistError(f"{shown} is a symbolic link; a saved knowledge base holds "
                           "plain files only")
    if not stat.S_ISREG(mode):
        raise PersistError(f"{shown} is not a regular file")
    # O_NOFOLLOW: should the file become a link after the check above, do not follow it.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        with os.fdopen(os.open(path, flags), "rb") as source:
            return source.read()
    except OSError as error:
        raise PersistError(f"{shown} cannot be read: {error}") from error


class NewFiles:
    """Writes the files of a new copy into ``folder`` and keeps their checksums in
    ``sha256`` (name → hex digest), for the manifest. Each name may be written once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.sha256: dict[str, str] = {}

    def raw(self, name: str, data: bytes) -> None:
        if not is_plain_name(name) or name in _RESERVED or name in self.sha256:
            raise ValueError(f"cannot save a file named {name!r} (not a plain, new file name)")
        safe_folder.write_file(self.folder / name, data)
        self.sha256[name] = hashlib.sha256(data).hexdigest()
        safe_folder.crash_point(f"wrote {name}")

    def npy(self, name: str, array: np.ndarray) -> None:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(array), allow_pickle=False)
        self.raw(name, buffer.getvalue())

    def sparse_matrix(self, name: str, matrix: Any) -> None:
        buffer = io.BytesIO()
        sparse.save_npz(buffer, matrix)
        self.raw(name, buffer.getvalue())

    def json(self, name: str, value: Any) -> None:
        self.raw(name, json.dumps(value, ensure_ascii=False).encode("utf-8"))

    def jsonl_gz(self, name: str, records: list[Any]) -> None:
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        self.raw(name, gzip.compress(lines.encode("utf-8"), mtime=0))

    def manifest(self, fields: dict[str, Any]) -> None:
        """Write ``manifest.json`` — the last file of a copy — holding ``fields``."""
        safe_folder.write_file(self.folder / MANIFEST,
                               json.dumps(fields, ensure_ascii=False, indent=1).encode("utf-8"))
        safe_folder.crash_point("wrote the manifest")


class SavedFiles:
    """The files a manifest lists (``sha256``: name → hex digest), each read once,
    checked against its checksum and only then parsed — so what is parsed is exactly
    what the manifest describes. ``shown`` names the folder in messages.

    Every problem raises :class:`PersistError` naming the file and the reason.
    """

    def __init__(self, folder: Path, shown: Path, sha256: dict[str, str]) -> None:
        for name, digest in sha256.items():
            if not is_plain_name(name) or name in _RESERVED:
                raise PersistError(f"{shown / MANIFEST} lists {name!r:.80}, which is "
                                   f"{_NOT_PLAIN}")
            if not re.fullmatch("[0-9a-f]{64}", digest):
                raise PersistError(f"{shown / MANIFEST}: the checksum of {name!r} is not a "
                                   f"SHA-256 (64 hex digits): {digest!r:.80}")
        self.folder, self.shown, self.sha256 = folder, shown, sha256
        self.unread = set(sha256)

    def raw(self, name: str) -> bytes:
        shown = self.shown / name
        if name not in self.sha256:
            raise PersistError(f"{shown} is not listed in {MANIFEST} with a checksum")
        data = read_inside(self.folder, name, shown)
        if hashlib.sha256(data).hexdigest() != self.sha256[name]:
            raise PersistError(f"{shown} is missing or damaged (checksum mismatch)")
        self.unread.discard(name)
        return data

    def _parse(self, name: str, what: str, parse: Callable[[bytes], Any]) -> Any:
        data = self.raw(name)
        try:
            return parse(data)
        except Exception as error:  # whatever the parser trips on in untrusted bytes
            raise PersistError(f"{self.shown / name} is not {what}: "
                               f"{type(error).__name__}: {error}") from error

    def npy(self, name: str) -> np.ndarray:
        array = self._parse(name, "a valid .npy array",
                            lambda data: np.load(io.BytesIO(data), allow_pickle=False))
        if not isinstance(array, np.ndarray):  # np.load gives an NpzFile for a .npz
            array.close()
            raise PersistError(f"{self.shown / name} is not a valid .npy array (a .npz)")
        return array

    def sparse_matrix(self, name: str) -> Any:
        # scipy's load_npz reads with allow_pickle=False
        return self._parse(name, "a valid .npz sparse matrix",
                           lambda data: sparse.load_npz(io.BytesIO(data)))

    def json(self, name: str, shape: Any = object, what: str = "the value") -> Any:
        """The JSON value in ``name``, which must have ``shape`` (named ``what``)."""
        value = self._parse(name, "valid UTF-8 JSON", lambda data: json.loads(data.decode()))
        check_shape(value, shape, what, self.shown / name)
        return value

    def jsonl_gz(self, name: str, shape: Any = object) -> list[Any]:
        """The records of a gzip-compressed JSON-lines file, each of ``shape``."""
        text = self._parse(name, "valid gzip-compressed UTF-8",
                           lambda data: gzip.decompress(data).decode("utf-8"))
        records = []
        # split on "\n" only: JSON escapes it inside strings, but not U+2028 and the
        # other separators str.splitlines() would also cut at
        for number, line in enumerate(text.split("\n"), 1):
            if line:
                try:
                    records.append(json.loads(line))
                except (ValueError, RecursionError) as error:
                    raise PersistError(f"{self.shown / name} line {number} is not valid "
                                       f"JSON: {error}") from error
                check_shape(records[-1], shape, f"line {number}", self.shown / name)
        return records

    def check_unread(self) -> None:
        """Check the listed files nothing read (e.g. vectors whose embedder was not given)."""
        for name in sorted(self.unread):
            self.raw(name)
