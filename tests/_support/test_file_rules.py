"""The file rules (course_lib._support.file_rules), each with the attack it stops: regular
files only (a FIFO or a device never blocks or runs forever), no symlink leaving the
folder (nor a symlinked folder followed), and a size limit checked before and during the
read. Where a rule is bypassed, the test shows what it would have let through."""

import os
import socket
import stat
import threading
from pathlib import Path

import pytest
from bad_inputs import safe_fifo

from course_lib._support import file_rules
from course_lib._support.file_rules import (
    check_size,
    file_kind,
    read_limited,
    scan_folder,
    why_skipped,
)

pytestmark = pytest.mark.skipif(os.name != "posix" or not hasattr(os, "mkfifo"),
                                reason="FIFOs, devices and symlinks need a POSIX system")


def txt(path: Path) -> bool:
    return path.suffix == ".txt"


def everything(path: Path) -> bool:
    return True


@pytest.fixture()
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("甲。", encoding="utf-8")
    return folder


# ------------------------------------------------------------------ 1. regular files only
def test_file_kind_names_every_kind_of_file(tmp_path):
    assert file_kind(os.stat(tmp_path).st_mode) == "a folder"
    assert file_kind(os.stat("/dev/null").st_mode) == "a character device"
    for kind, name in ((stat.S_IFREG, "a regular file"), (stat.S_IFIFO, "a FIFO"),
                       (stat.S_IFSOCK, "a socket"), (stat.S_IFBLK, "a block device"),
                       (stat.S_IFCHR, "a character device"), (stat.S_IFDIR, "a folder")):
        assert file_kind(kind | 0o644) == name
    assert file_kind(stat.S_IFLNK) == "not a regular file"  # what fstat never reports
    assert file_kind(0) == "not a regular file"


def test_a_fifo_in_a_folder_is_skipped_and_reported_without_opening_it(corpus):
    pipe = safe_fifo(corpus / "pipe.txt")
    found, skipped = scan_folder(corpus, txt)
    assert found == [corpus / "a.txt"]
    assert skipped == ["pipe.txt (a FIFO, not a regular file)"]
    assert why_skipped(pipe, corpus.resolve()) == "a FIFO, not a regular file"
    assert why_skipped(corpus / "a.txt", corpus.resolve()) is None


def test_a_fifo_named_on_its_own_is_refused_without_blocking(corpus):
    pipe = safe_fifo(corpus / "pipe.txt")
    done = threading.Event()
    outcome = []

    def read() -> None:
        try:
            read_limited(pipe, 100, "LIMIT")
        except ValueError as error:
            outcome.append(str(error))
        finally:
            done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(3), "read_limited blocked on a FIFO"  # the watchdog comes at 5 s
    assert len(outcome) == 1 and "is a FIFO; readers read regular files only" in outcome[0]
    assert str(pipe) in outcome[0]


def test_the_fifo_rule_is_what_stops_the_hang(corpus):
    """Bypassed: the FIFO is a name like any other, and only the non-blocking open with the
    check on the open file stands between it and a read that waits for a writer forever."""
    pipe = safe_fifo(corpus / "pipe.txt")
    assert pipe.exists() and not pipe.is_file()  # a name a naive `glob("*.txt")` lists
    assert sorted(p.name for p in corpus.glob("*.txt")) == ["a.txt", "pipe.txt"]
    # Opened without O_NONBLOCK and with no writer, open() itself would wait (not done
    # here). read_limited opens it non-blocking, so it gets as far as its check:
    fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert stat.S_ISFIFO(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    with pytest.raises(ValueError, match="is a FIFO"):
        read_limited(pipe, 10, "LIMIT")
    assert scan_folder(corpus, txt)[1] == ["pipe.txt (a FIFO, not a regular file)"]


def test_a_socket_in_a_folder_is_skipped_even_behind_a_link_inside(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX)
    try:
        try:
            server.bind(str(folder / "s.txt"))
        except OSError as error:  # a path too long for a Unix socket
            pytest.skip(f"cannot make a Unix socket here: {error}")
        (folder / "link.txt").symlink_to(folder / "s.txt")  # inside: rule 2 lets it pass
        found, skipped = scan_folder(folder, txt)
    finally:
        server.close()
    assert found == []
    assert sorted(skipped) == ["link.txt (a socket, not a regular file)",
                               "s.txt (a socket, not a regular file)"]


def test_a_named_symlink_is_followed_but_must_end_at_a_regular_file(tmp_path):
    """A path the user names is theirs: its symlink is followed, to a regular file only."""
    (tmp_path / "real.txt").write_bytes(b"abc")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert read_limited(tmp_path / "link.txt", 10, "LIMIT") == b"abc"
    (tmp_path / "zero.txt").symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"zero\.txt' is a character device"):
        read_limited(tmp_path / "zero.txt", 10, "LIMIT")


# ------------------------------------------------------------------ 2. no symlink out
def test_a_symlink_to_dev_zero_is_skipped_not_read(corpus):
    (corpus / "zero.txt").symlink_to("/dev/zero")
    found, skipped = scan_folder(corpus, txt)
    assert found == [corpus / "a.txt"]
    assert skipped == ["zero.txt (a symlink leaving the folder, to '/dev/zero')"]


def test_a_symlink_to_a_file_outside_is_skipped_and_one_inside_is_followed(corpus, tmp_path):
    secret = tmp_path / "private_notes.txt"
    secret.write_text("my password", encoding="utf-8")
    (corpus / "notes.txt").symlink_to(secret)
    (corpus / "again.txt").symlink_to(corpus / "a.txt")  # inside the folder: fine
    (corpus / "relative.txt").symlink_to("../private_notes.txt")
    found, skipped = scan_folder(corpus, txt)
    assert found == [corpus / "a.txt", corpus / "again.txt"]
    assert sorted(skipped) == [f"notes.txt (a symlink leaving the folder, to {str(secret)!r})",
                               f"relative.txt (a symlink leaving the folder, to "
                               f"{str(secret)!r})"]
    inside = corpus.resolve()
    assert why_skipped(corpus / "notes.txt", inside).startswith("a symlink leaving the folder")
    assert why_skipped(corpus / "again.txt", inside) is None
    # Bypassed: an ordinary read follows the link and hands over the private notes.
    assert (corpus / "notes.txt").read_text(encoding="utf-8") == "my password"


def test_broken_and_looping_symlinks_are_reported(corpus):
    (corpus / "gone.txt").symlink_to(corpus / "nowhere.txt")
    (corpus / "loop.txt").symlink_to(corpus / "loop.txt")
    found, skipped = scan_folder(corpus, txt)
    assert found == [corpus / "a.txt"]
    assert sorted(skipped) == ["gone.txt (a broken symlink)", "loop.txt (a broken symlink)"]


def test_a_symlinked_folder_is_not_descended_into(corpus, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.txt").write_text("乙。", encoding="utf-8")
    (corpus / "sub").mkdir()
    (corpus / "sub" / "c.txt").write_text("丙。", encoding="utf-8")
    (corpus / "out").symlink_to(outside)
    (corpus / "sub" / "up").symlink_to(corpus)  # a cycle, and every file twice
    found, skipped = scan_folder(corpus, txt)
    assert found == [corpus / "a.txt", corpus / "sub" / "c.txt"]
    assert sorted(skipped) == ["out (a symlinked folder; not followed)",
                               "sub/up (a symlinked folder; not followed)"]
    # Bypassed: a walk that follows links reads the outside file (and loops back).
    followed = [Path(top) / name for top, _, names in os.walk(corpus, followlinks=True)
                for name in names]
    assert corpus / "out" / "b.txt" in followed


def test_what_wanted_rejects_is_ignored_silently(corpus):
    safe_fifo(corpus / "pipe.bin")
    (corpus / "zero.bin").symlink_to("/dev/zero")
    (corpus / "b.md").write_text("x", encoding="utf-8")
    assert scan_folder(corpus, txt) == ([corpus / "a.txt"], [])
    found, skipped = scan_folder(corpus, everything)
    assert found == [corpus / "a.txt", corpus / "b.md"] and len(skipped) == 2


def test_files_found_are_sorted_across_subfolders(tmp_path):
    for name in ("z.txt", "m/b.txt", "m/a.txt", "b.txt", "m/n/c.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x", encoding="utf-8")
    found, skipped = scan_folder(tmp_path, txt)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == \
        ["b.txt", "m/a.txt", "m/b.txt", "m/n/c.txt", "z.txt"]
    assert skipped == []


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root can list a folder without permissions")
def test_a_folder_that_cannot_be_listed_is_reported(corpus):
    locked = corpus / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        found, skipped = scan_folder(corpus, txt)
    finally:
        locked.chmod(0o755)
    assert found == [corpus / "a.txt"]
    assert len(skipped) == 1 and "locked (cannot list it: Permission denied)" in skipped[0]


# ------------------------------------------------------------------ 3. a size limit
def test_check_size_allows_the_limit_and_refuses_one_byte_more():
    check_size(Path("big.txt"), 1000, 1000, "MAX_FILE_BYTES")
    with pytest.raises(ValueError) as caught:
        check_size(Path("big.txt"), 1001, 1000, "MAX_FILE_BYTES")
    assert str(caught.value) == (
        "file 'big.txt' is 1,001 bytes, above the limit of 1,000 bytes (MAX_FILE_BYTES): "
        "split it, or raise the limit, e.g. MAX_FILE_BYTES = 2,000")


def test_read_limited_reads_up_to_the_limit_and_refuses_a_larger_file(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 10)
    assert read_limited(path, 10, "LIMIT") == b"x" * 10
    assert read_limited(str(path), 10, "LIMIT") == b"x" * 10  # a str path too
    with pytest.raises(ValueError, match=r"f\.txt' is 10 bytes, above the limit of 9 bytes "
                                         r"\(LIMIT\)"):
        read_limited(path, 9, "LIMIT")
    path.write_bytes(b"")
    assert read_limited(path, 0, "LIMIT") == b""


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "growing.txt"
    path.write_bytes(b"y" * 1000)
    real_fstat = os.fstat
    reads = []

    def fstat_says_small(fd: int) -> os.stat_result:
        info = list(real_fstat(fd))
        info[6] = 5  # st_size: what the file was when it was checked
        return os.stat_result(info)

    real_fdopen = os.fdopen

    class Counting:
        """The open file, recording how much each read asks for and gets."""

        def __init__(self, file):
            self.file = file

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            self.file.close()

        def read(self, size=-1):
            data = self.file.read(size)
            reads.append((size, len(data)))
            return data

    def counting_fdopen(*args, **kwargs):
        return Counting(real_fdopen(*args, **kwargs))

    monkeypatch.setattr(file_rules.os, "fstat", fstat_says_small)
    monkeypatch.setattr(file_rules.os, "fdopen", counting_fdopen)
    with pytest.raises(ValueError, match=r"growing\.txt' is more than 10 \(it grew while "
                                         r"being read\) bytes, above the limit of 10 bytes"):
        read_limited(path, 10, "LIMIT")
    assert reads == [(11, 11)]  # one byte past the limit, not the whole file
    # Bypassed: the check before reading alone passes the size it was told, and a read to
    # the end would then take all 1,000 bytes.
    monkeypatch.undo()
    check_size(path, 5, 10, "LIMIT")
    assert len(path.read_bytes()) == 1000


def test_a_folder_given_to_read_limited_is_refused_and_no_descriptor_is_left_open(tmp_path):
    # Before the check moved ahead of os.fdopen, a folder gave IsADirectoryError and each
    # call leaked its descriptor.
    open_before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        with pytest.raises(ValueError, match=r"is a folder; readers read regular files only"):
            read_limited(tmp_path, 100, "LIMIT")
    assert len(os.listdir("/proc/self/fd")) == open_before
