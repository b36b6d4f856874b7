"""Replace a folder as a whole: never someone else's folder, never half of one.

:func:`course_lib.store.persist.save` writes a knowledge base through this module. Nothing
here knows what the folder holds: the caller says how to write a copy and how to
recognise one of its own (:class:`SafeFolder`).

How a folder ``NAME`` is replaced
---------------------------------
1. Take the lock ``.NAME.lock`` beside it: one save at a time.
2. Repair what a crashed save left: put ``.NAME-old`` back if ``NAME`` is missing; delete
   unfinished copies ``.NAME-xxxxxxxx`` and a leftover ``.NAME-old``.
3. Refuse unless ``NAME`` does not exist, is empty, or holds a copy made this way.
4. Write the new copy into ``.NAME-xxxxxxxx``, marked ``INCOMPLETE`` until the caller has
   written its last file, every file flushed to disk with ``fsync``.
5. Swap it in with two renames, ``NAME`` → ``.NAME-old`` and ``.NAME-xxxxxxxx`` → ``NAME``,
   then delete ``.NAME-old``.

What is promised
----------------
* **Nothing of yours is deleted.** Only a folder that is empty, marked ``INCOMPLETE`` and
  holding plain files only, or recognised by the caller as its own copy (besides at most
  ``.DS_Store`` / ``Thumbs.db`` / ``desktop.ini``) is replaced or deleted; anything else
  is refused with a ``ValueError`` that says what to do, and so is the folder Python
  runs in. Besides ``NAME`` itself, only the three helpers above are touched.
* **A crash leaves the old copy or the new one.** Between the two renames nothing is at
  ``NAME``: if the process dies there, the next save or :meth:`SafeFolder.read` renames
  ``.NAME-old`` back (the tests crash a save at every step). After a power cut the same
  should hold where ``fsync`` reaches the disk, as on Linux's local file systems; it is
  not promised on network file systems, on macOS (whose ``fsync`` stops at the drive's
  cache) or on Windows (which cannot flush a folder).
* **Saves take turns.** The lock is an operating-system lock (``flock``;
  ``msvcrt.locking`` on Windows, untested there); another save waits for it, up to
  ``timeout`` seconds, then raises ``TimeoutError``. The OS drops the lock when the
  holding process dies, so a killed save never blocks the next one. Reads do not take
  the lock; :meth:`SafeFolder.read` takes it only to read again after a failed read that
  overlapped a save. Locks are not reliable across machines: do not save into one
  network folder from two computers at once.

>>> import tempfile
>>> def ours(folder, names):  # a copy holds one file, and nothing else
...     return None if names == ["data.txt"] else f"it holds {', '.join(names)}"
>>> with tempfile.TemporaryDirectory() as parent:
...     box = SafeFolder(Path(parent) / "box", "a box", ours, last="data.txt")
...     box.replace(lambda copy: write_file(copy / "data.txt", b"one"), timeout=1)
...     box.replace(lambda copy: write_file(copy / "data.txt", b"two"), timeout=1)
...     (Path(parent) / "box" / "data.txt").read_bytes(), sorted(os.listdir(parent))
(b'two', ['box'])
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt

# In a copy being written, from its first moment until the caller's last file is in it.
INCOMPLETE = "INCOMPLETE"
OS_CLUTTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})  # made by file browsers
T = TypeVar("T")


def crash_point(label: str) -> None:
    """A point between two steps of a save. It does nothing: the tests replace it with a
    function that raises, to check that a crash at every such point leaves the old copy
    or the new one."""


def write_file(path: Path, data: bytes) -> None:
    """Create ``path`` (it must not exist) holding ``data``, flushed to disk."""
    with open(path, "xb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def fsync_folder(folder: Path) -> None:
    """Flush a folder's list of names (new files, renames) to disk, where the OS can."""
    if os.name != "posix":
        return  # Windows cannot open a folder to flush it
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_regular(path: Path) -> bool:
    """A regular file, not a symbolic link to one."""
    return path.is_file() and not path.is_symlink()


class SafeFolder:
    """The folder ``directory``, replaced only as a whole and one save at a time.

    ``kind`` says what a copy is, for messages (``"a saved knowledge base"``).
    ``why_not_ours(folder, names)`` looks at a folder holding ``names`` (sorted, never
    empty, file-browser clutter left out) and returns ``None`` if it is a copy that a
    save wrote, else the reason it is not. ``last`` is the file a copy is recognised by
    (its manifest): it is deleted last, so that a crash while deleting a copy leaves a
    folder still recognisably a save's.
    """

    def __init__(self, directory: str | os.PathLike[str], kind: str,
                 why_not_ours: Callable[[Path, list[str]], str | None], last: str) -> None:
        if not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"directory must be a str or Path, got {type(directory).__name__}")
        self.directory = directory  # as the caller wrote it, for messages
        self.path = Path(directory).resolve()
        self.kind, self.why_not_ours, self.last = kind, why_not_ours, last

    @property
    def old(self) -> Path:
        """Where the previous copy waits during the swap."""
        return self.path.with_name(f".{self.path.name}-old")

    # ------------------------------------------------------------ the two public uses
    def replace(self, write: Callable[[Path], None], *, timeout: float) -> None:
        """Make a new copy with ``write(folder)`` (it writes ``last`` last) and put it at
        the path in one step. ``ValueError`` and nothing touched if the path holds
        something else; ``TimeoutError`` if another save holds the lock too long."""
        self.check_replaceable()  # before any work
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _folder_lock(self.path, timeout):
            self._recover_interrupted_swap()
            self._clean_leftovers()
            self.check_replaceable()  # again: it may have changed meanwhile
            new_copy = self._write_new_copy(write)
            try:
                self._swap_in(new_copy)
            except Exception:
                if os.path.lexists(new_copy):
                    self._delete_own(new_copy)
                raise

    def read(self, read: Callable[[], T], error: type[Exception], *, timeout: float) -> T:
        """``read()`` the folder; it raises ``error`` when what it finds is unusable.

        If that happens while a save of the folder is under way (or has just swapped a
        new copy in, or was interrupted mid-swap), wait for that save's lock, repair an
        interrupted swap, and ``read()`` again. If the repair fails (a read-only folder,
        say), raise ``error`` saying so.
        """
        before = _identity(self.path)
        try:
            return read()
        except error:
            save_seen = (os.path.lexists(_lock_file(self.path)) or os.path.lexists(self.old)
                         or _identity(self.path) != before)  # a swap makes a new folder
            if not save_seen:
                raise
        try:
            with _folder_lock(self.path, timeout):  # no save can run while we hold it
                self._recover_interrupted_swap()
                return read()
        except TimeoutError:
            raise
        except OSError as os_error:  # e.g. a read-only folder: no lock file, no rename
            raise error(f"{Path(self.directory)} cannot be read while a save's leftovers sit "
                        f"beside it and they cannot be repaired: {os_error}") from os_error

    # ------------------------------------------------------------ what may be replaced
    def check_replaceable(self) -> None:
        """``ValueError`` unless a save may replace the path (see :meth:`why_not_replaceable`).

        Refuses the folder Python runs in and the folders above it: replacing it would
        leave Python running in a deleted folder.
        """
        cwd = Path.cwd().resolve()
        if self.path == cwd or self.path in cwd.parents:
            raise ValueError(f"directory {str(self.directory)!r} is the folder Python runs in "
                             f"({cwd}) or holds it; save into a new subfolder instead, e.g. "
                             "save(doc, 'kb')")
        reason = self.why_not_replaceable(self.path)
        if reason:
            raise ValueError(
                f"save: {str(self.directory)!r} is not {self.kind}, so it is left untouched "
                f"({reason}). Save into a new folder instead, e.g. "
                f"{str(self.path.with_name(self.path.name + '_kb'))!r}, or delete this one "
                "yourself if nothing in it is needed.")

    def why_not_replaceable(self, folder: Path) -> str | None:
        """``None`` if a save may replace ``folder``: it does not exist, is empty, or
        holds a copy a save wrote and nothing else. Otherwise the reason, for a message."""
        if not os.path.lexists(folder):
            return None
        if folder.is_symlink() or not folder.is_dir():
            return "it is not a folder"
        names = sorted(name for name in os.listdir(folder)
                       if not (name in OS_CLUTTER and is_regular(folder / name)))
        return self.why_not_ours(folder, names) if names else None

    def _is_own(self, folder: Path) -> bool:
        """Whether a save made ``folder``: a real folder that is empty, or is marked
        :data:`INCOMPLETE` and holds plain files only, or holds a copy and nothing else."""
        if folder.is_symlink() or not folder.is_dir():
            return False
        names = os.listdir(folder)
        if INCOMPLETE in names:
            return all(is_regular(folder / name) for name in names)
        return self.why_not_replaceable(folder) is None

    def _delete_own(self, folder: Path) -> None:
        """Delete a folder a save made: its files, then the two that mark it as a save's
        (``last``, INCOMPLETE), then the folder — so a crash halfway leaves a folder that
        is still recognisably a save's, which the next save finishes deleting."""
        for name in sorted(os.listdir(folder), key=lambda name: name in (self.last, INCOMPLETE)):
            crash_point(f"delete {folder.name}/{name}")
            os.unlink(folder / name)
        crash_point(f"delete {folder.name}")
        os.rmdir(folder)

    # ------------------------------------------------------------ the steps of a save
    def _recover_interrupted_swap(self) -> bool:
        """If a save died between its two renames — nothing at the path, the previous
        copy at ``.NAME-old`` — rename that copy back. Call it holding the lock."""
        if (os.path.lexists(self.path) or not os.path.lexists(self.old)
                or not self._is_own(self.old)):
            return False
        os.replace(self.old, self.path)
        fsync_folder(self.path.parent)
        return True

    def _clean_leftovers(self) -> None:
        """Delete what crashed saves left beside the path: unfinished copies
        (``.NAME-xxxxxxxx``) and a previous copy (``.NAME-old``), if a save made them;
        anything else is left alone. Call it holding the lock, after
        :meth:`_recover_interrupted_swap` (which keeps ``.NAME-old`` if it is all there is)."""
        unfinished = re.compile(rf"\.{re.escape(self.path.name)}-[a-z0-9_]{{8}}")
        for name in sorted(os.listdir(self.path.parent)):
            if unfinished.fullmatch(name) and self._is_own(self.path.parent / name):
                self._delete_own(self.path.parent / name)
        if os.path.lexists(self.old):
            if not self._is_own(self.old):
                raise ValueError(f"save: {self.old} is in the way of saving {self.path.name!r} "
                                 "and was not made by a save; rename or remove it")
            self._delete_own(self.old)

    def _write_new_copy(self, write: Callable[[Path], None]) -> Path:
        """A new folder ``.NAME-xxxxxxxx`` beside the path holding what ``write`` wrote,
        everything flushed to disk. On an error it is deleted."""
        while True:  # not tempfile.mkdtemp: its folders are private (0700), a copy need not be
            new_copy = self.path.with_name(f".{self.path.name}-{secrets.token_hex(4)}")
            try:
                new_copy.mkdir()
                break
            except FileExistsError:
                continue
        try:
            crash_point("made the new folder")
            write_file(new_copy / INCOMPLETE, b"An unfinished save by course_lib; the next "
                       b"save into the folder beside this one deletes it.\n")
            crash_point("marked it incomplete")
            write(new_copy)
            os.unlink(new_copy / INCOMPLETE)
            fsync_folder(new_copy)
            crash_point("the new copy is complete")
        except Exception:
            self._delete_own(new_copy)
            raise
        return new_copy

    def _swap_in(self, new_copy: Path) -> None:
        """Put the complete ``new_copy`` at the path with two renames, then delete the
        previous copy. Between the two renames nothing is at the path: a crash there is
        what :meth:`_recover_interrupted_swap` repairs. An error in the second rename puts
        the previous copy back."""
        had_target = os.path.lexists(self.path)
        if had_target:
            os.replace(self.path, self.old)
            crash_point("moved the old copy aside")
        try:
            os.replace(new_copy, self.path)
        except Exception:
            if had_target:
                os.replace(self.old, self.path)
            raise
        fsync_folder(self.path.parent)
        crash_point("moved the new copy in")
        if had_target:
            self._delete_own(self.old)


def _lock_file(target: Path) -> Path:
    return target.with_name(f".{target.name}.lock")


def _identity(path: Path) -> tuple[int, int, int] | None:
    """Which file or folder is at ``path`` (a save's swap puts a new one there), or None."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_mtime_ns


# ============================================================ the lock
def _try_lock(fd: int) -> bool:
    """Take the OS lock on the open file ``fd`` without waiting; False if it is held."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except BlockingIOError:
        return False
    except PermissionError:  # what msvcrt raises for a held lock
        if fcntl is not None:
            raise
        return False
    return True


def _is_file_at(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is (still) the file at ``path``."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


@contextmanager
def _folder_lock(target: Path, timeout: float) -> Iterator[None]:
    """Hold the lock on ``.NAME.lock`` beside ``target``: the turn to change ``target``.

    An OS lock, which the OS drops when the holding process dies: a killed save leaves
    at most an empty, unlocked lock file, which the next save simply locks. Waits up to
    ``timeout`` seconds, then ``TimeoutError``. The holder deletes the file on release
    (Windows refuses while it is open: there it stays). A waiter that had opened the
    deleted file sees that it is no longer the file at that path and tries again, so
    two saves never hold two different files.

    Why not the ``filelock`` package (tried; the tests pass with it): it keeps its lock
    file in place, and where ``flock`` is missing it falls back to a marker file holding
    its own owner record. Deleting the file on release and noting our process id in it,
    as this lock does, would then depend on its internals.
    """
    path = _lock_file(target)
    deadline = time.monotonic() + timeout
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            locked = _try_lock(fd)
            if locked and _is_file_at(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        if locked:
            continue  # the file was deleted or replaced while we waited: lock the new one
        if time.monotonic() >= deadline:
            holder = ""
            with suppress(OSError):
                holder = path.read_text().strip()
            raise TimeoutError(f"another save of {target} (process {holder or '?'}) has held "
                               f"{path.name} for over {timeout:g} s; wait for it to finish, "
                               "or save into another folder")
        time.sleep(0.05)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # who holds it, for people and messages
        yield
    finally:
        with suppress(OSError):
            os.unlink(path)  # while still holding it: see the docstring
        os.close(fd)


def write_text_atomically(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to the file ``target`` whole, or not at all.

    The text goes to a temporary file beside ``target`` that then replaces it in one
    rename, so ``target`` is either the old file or the whole new one; the temporary file
    is removed on any failure (disk full, interrupted, ...). The new file gets the
    permissions an ordinary ``open(target, "w")`` would give it (0666 less the umask).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = write_text_atomically(Path(folder) / "run.txt", "q1 Q0 d1 1 1 tag\\n")
    ...     path.read_text(), sorted(p.name for p in Path(folder).iterdir())
    ('q1 Q0 d1 1 1 tag\\n', ['run.txt'])
    """
    import tempfile

    target = Path(target)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp_name, target)
    finally:
        Path(tmp_name).unlink(missing_ok=True)
    return target
