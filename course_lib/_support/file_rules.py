"""What a file must be before the library reads it: the rules, stated and checked here once.

The corpus readers (:mod:`course_lib.readers`) read files a user names or a folder holds;
these rules keep such a read from blocking, from leaving the folder, or from exhausting
memory. Each is a function below, and each has the attack it stops in the tests
(tests/_support/test_file_rules.py).

1. **Regular files only** (:func:`file_kind`). A FIFO, socket or device named
   ``something.txt`` would block or never end. In a folder it is skipped and reported
   (:func:`why_skipped`); named on its own it is an error. :func:`read_limited` checks again
   on the open file, opened without blocking, so one swapped in after the check cannot hang.
2. **No symlink leaves the folder** (:func:`why_skipped`, :func:`scan_folder`). A file
   symlink is followed only when its target lies inside the folder read (a ``.txt`` link to
   ``/dev/zero`` or to private notes is skipped), and a symlinked folder is never descended
   into (no cycles, no duplicates). A path the user names is theirs: a symlink there is
   followed, but its target must still be a regular file.
3. **At most a size limit** (:func:`check_size`, :func:`read_limited`). The size is checked
   before reading, and the read stops one byte past the limit, so a file that grows while it
   is read cannot exhaust memory. The limit is the caller's (the readers':
   ``course_lib.readers.MAX_FILE_BYTES``).

What is not here: what a file's bytes mean (UTF-8, no NUL: the readers' own), and the saved
knowledge base's stricter rule — plain files only, no symlink at all —
(:func:`course_lib.store.saved_files.read_inside`).

>>> import stat
>>> file_kind(stat.S_IFIFO)
'a FIFO'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words (``"a regular file"`` for one)."""
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def too_large(path: Path, size: int | str, limit: int, knob: str) -> ValueError:
    """The error for a file of ``size`` bytes above ``limit``, naming the ``knob`` that
    raises the limit."""
    return ValueError(f"file {str(path)!r} is {size} bytes, above the limit of {limit:,} bytes "
                      f"({knob}): split it, or raise the limit, e.g. {knob} = {2 * limit:,}")


def check_size(path: Path, size: int, limit: int, knob: str) -> None:
    """Rule 3 before reading: ``ValueError`` naming ``path``, its ``size`` and the limit if
    ``size`` exceeds ``limit``."""
    if size > limit:
        raise too_large(path, f"{size:,}", limit, knob)


def read_limited(path: str | os.PathLike[str], limit: int, knob: str) -> bytes:
    """The bytes of the regular file ``path``, refusing more than ``limit`` (rules 1 and 3
    on the open file).

    Opens without blocking, checks on the open file that it is a regular file no larger
    than ``limit``, then reads at most one byte past it — a file that grows while it is
    read is refused, not read to the end.
    """
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # checked before fdopen, which refuses a folder
            raise ValueError(f"file {str(path)!r} is {file_kind(info.st_mode)}; readers read "
                             "regular files only")
        check_size(path, info.st_size, limit, knob)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as file:
        data = file.read(limit + 1)
        if len(data) > limit:
            raise too_large(path, f"more than {limit:,} (it grew while being read)", limit, knob)
    return data


def why_skipped(path: Path, inside: Path) -> str | None:
    """Why a file found in the folder ``inside`` (resolved) breaks rule 1 or 2, or ``None``
    if it may be read."""
    if path.is_symlink():
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return "a broken symlink"
        if not target.is_relative_to(inside):
            return f"a symlink leaving the folder, to {str(target)!r}"
    try:
        mode = path.stat().st_mode
    except OSError as error:
        return f"cannot read it: {error.strerror}"
    if not stat.S_ISREG(mode):
        return f"{file_kind(mode)}, not a regular file"
    return None


def scan_folder(folder: Path, wanted: Callable[[Path], bool]) -> tuple[list[Path], list[str]]:
    """The files under ``folder`` that ``wanted`` and rules 1 and 2 let through (sorted), and
    why each other wanted path was skipped.

    Walks without following symlinked folders. A file ``wanted`` rejects is ignored silently
    (a folder may hold anything); everything else that is skipped is reported.
    """
    inside = folder.resolve()
    found: list[Path] = []
    skipped: list[str] = []

    def unlistable(error: OSError) -> None:
        skipped.append(f"{error.filename} (cannot list it: {error.strerror})")

    for top, dirs, names in os.walk(folder, onerror=unlistable, followlinks=False):
        here = Path(top)
        for name in dirs:
            if (here / name).is_symlink():
                skipped.append(f"{(here / name).relative_to(folder)} (a symlinked folder; "
                               "not followed)")
        for name in names:
            path = here / name
            if not wanted(path):
                continue
            why = why_skipped(path, inside)
            if why is None:
                found.append(path)
            else:
                skipped.append(f"{path.relative_to(folder)} ({why})")
    return sorted(found), skipped
