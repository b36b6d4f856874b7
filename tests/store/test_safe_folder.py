"""Replacing a folder as a whole (course_lib.store.safe_folder), used directly with a toy
kind of copy: SafeFolder refuses what is not its own and touches nothing, cleans only the
leftovers it made, leaves the old or the new copy after a crash, deletes a copy's mark
last; write_text_atomically leaves the old file or the new one and never its temporary.
(How persist.save uses it is in tests/store/test_persist.py.)"""

import os
import re
import stat
from pathlib import Path

import pytest

from course_lib.store import safe_folder
from course_lib.store.safe_folder import INCOMPLETE, SafeFolder, write_text_atomically

LAST = "stamp.txt"  # what marks a toy copy as one a save wrote


def ours(folder, names):
    """A toy copy: ``stamp.txt`` and ``data*.txt`` files, nothing else."""
    others = [n for n in names if n != LAST and not re.fullmatch(r"data\d*\.txt", n)]
    if LAST not in names:
        return "it has no stamp.txt"
    return f"it holds {', '.join(others)}" if others else None


def writer(*contents):
    def write(copy):
        for i, text in enumerate(contents):
            safe_folder.write_file(copy / f"data{i}.txt", text.encode())
        safe_folder.write_file(copy / LAST, b"ok")
    return write


def names_in(folder):
    return sorted(os.listdir(folder))


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(Path(folder).rglob("*"))}


@pytest.fixture()
def box(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return SafeFolder(tmp_path / "box", "a toy box", ours, last=LAST)


class Killed(BaseException):
    """Stands for kill -9: no ``except Exception`` clean-up runs."""


def crash_at(monkeypatch, label):
    seen = []

    def step(at):
        seen.append(at)
        if re.fullmatch(label, at):
            raise Killed(at)

    monkeypatch.setattr(safe_folder, "crash_point", step)
    return seen


def test_a_directory_must_be_a_path():
    with pytest.raises(TypeError, match="directory must be a str or Path, got int"):
        SafeFolder(3, "a toy box", ours, LAST)


def test_a_new_folder_is_made_and_replaced_leaving_no_helper_beside_it(box, tmp_path):
    box.replace(writer("one", "two"), timeout=1)
    assert names_in(box.path) == ["data0.txt", "data1.txt", LAST]
    box.replace(writer("three"), timeout=1)
    assert names_in(box.path) == ["data0.txt", LAST]
    assert (box.path / "data0.txt").read_text() == "three"
    assert names_in(tmp_path) == ["box"]  # no .box.lock, .box-old or .box-xxxxxxxx
    assert box.old == tmp_path / ".box-old"


@pytest.mark.parametrize("plant, reason", [
    (lambda p: (p.mkdir(), (p / "notes.md").write_text("mine")), "it has no stamp.txt"),
    (lambda p: (p.mkdir(), (p / LAST).write_text("x"), (p / "notes.md").write_text("mine")),
     "it holds notes.md"),
    (lambda p: p.write_text("a file"), "it is not a folder"),
    (lambda p: (p.parent.joinpath("real").mkdir(), p.symlink_to(p.parent / "real")),
     "it is not a folder"),
    (lambda p: (p.mkdir(), (p / ".DS_Store").mkdir()), "it has no stamp.txt"),
])
def test_what_is_not_its_own_is_refused_and_nothing_is_touched(box, tmp_path, plant, reason):
    plant(box.path)
    before, calls = snapshot(tmp_path), []
    with pytest.raises(ValueError) as caught:
        box.replace(lambda copy: calls.append(copy), timeout=1)
    message = str(caught.value)
    assert message.startswith(f"save: {str(box.directory)!r} is not a toy box, so it is left "
                              f"untouched ({reason}).")
    assert repr(str(tmp_path / "box_kb")) in message  # a folder to use instead
    assert calls == [] and snapshot(tmp_path) == before


def test_an_empty_folder_or_one_with_file_browser_clutter_only_is_replaced(box, tmp_path):
    box.path.mkdir()
    (box.path / ".DS_Store").write_bytes(b"clutter")
    (box.path / "Thumbs.db").write_bytes(b"clutter")
    assert box.why_not_replaceable(box.path) is None
    box.replace(writer("new"), timeout=1)
    assert names_in(box.path) == ["data0.txt", LAST]


def test_the_folder_python_runs_in_and_those_above_it_are_refused(tmp_path, monkeypatch):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "er")
    for directory in (tmp_path / "deep" / "er", tmp_path / "deep", tmp_path, "."):
        folder = SafeFolder(directory, "a toy box", ours, LAST)
        with pytest.raises(ValueError, match="is the folder Python runs in"):
            folder.check_replaceable()
    SafeFolder("sub", "a toy box", ours, LAST).check_replaceable()  # below it: fine


def test_an_error_while_writing_deletes_the_unfinished_copy_and_keeps_the_old(box, tmp_path):
    box.replace(writer("old"), timeout=1)

    def fails(copy):
        safe_folder.write_file(copy / "data0.txt", b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        box.replace(fails, timeout=1)
    assert names_in(tmp_path) == ["box"] and (box.path / "data0.txt").read_text() == "old"


@pytest.mark.parametrize("label", ["made the new folder", "marked it incomplete", "wrote",
                                   "the new copy is complete", "moved the old copy aside",
                                   "moved the new copy in", r"delete \.box-old/.*"])
def test_a_crash_leaves_the_old_or_the_new_copy_and_the_next_save_cleans_up(
        box, tmp_path, monkeypatch, label):
    box.replace(writer("old"), timeout=1)
    crash_at(monkeypatch, label if label != "wrote" else "never")
    if label == "wrote":  # a crash inside the caller's writing, before its last file
        def write(copy):
            safe_folder.write_file(copy / "data0.txt", b"new")
            raise Killed("while writing")
    else:
        write = writer("new")
    with pytest.raises(Killed):
        box.replace(write, timeout=1)
    monkeypatch.setattr(safe_folder, "crash_point", lambda at: None)

    def read():
        if not (box.path / LAST).exists():
            raise LookupError("no copy here")
        return (box.path / "data0.txt").read_text()

    assert box.read(read, LookupError, timeout=1) in ("old", "new")  # repairs a gap
    box.replace(writer("next"), timeout=1)
    assert names_in(tmp_path) == ["box"] and read() == "next"


def test_a_copy_is_deleted_with_its_marks_last(box, tmp_path, monkeypatch):
    box.replace(writer("a", "b", "c"), timeout=1)
    seen = crash_at(monkeypatch, "never")
    box.replace(writer("new"), timeout=1)
    deletes = [label.split("/")[-1] for label in seen if label.startswith("delete .box-old/")]
    assert sorted(deletes[:-1]) == ["data0.txt", "data1.txt", "data2.txt"]
    assert deletes[-1] == LAST and seen[-1] == "delete .box-old"


def test_leftovers_are_deleted_only_when_a_save_made_them(box, tmp_path):
    box.replace(writer("old"), timeout=1)
    unfinished = tmp_path / ".box-0123abcd"  # a crashed save's: marked, plain files only
    unfinished.mkdir()
    (unfinished / INCOMPLETE).write_text("")
    (unfinished / "data0.txt").write_text("half")
    theirs = tmp_path / ".box-99999999"  # the same kind of name, not marked: someone's
    theirs.mkdir()
    (theirs / "notes.md").write_text("mine")
    marked_with_a_folder = tmp_path / ".box-aaaaaaaa"  # marked, but holds a folder
    (marked_with_a_folder / "sub").mkdir(parents=True)
    (marked_with_a_folder / INCOMPLETE).write_text("")
    other_name = tmp_path / ".box-short"  # not the pattern of a copy at all
    other_name.mkdir()
    (other_name / INCOMPLETE).write_text("")
    box.replace(writer("new"), timeout=1)
    assert names_in(tmp_path) == [".box-99999999", ".box-aaaaaaaa", ".box-short", "box"]


def test_a_previous_copy_beside_it_that_is_not_its_own_stops_the_save(box, tmp_path):
    box.replace(writer("old"), timeout=1)
    box.old.mkdir()
    (box.old / "notes.md").write_text("mine")
    with pytest.raises(ValueError, match=r"\.box-old is in the way of saving 'box' and was "
                                         "not made by a save"):
        box.replace(writer("new"), timeout=1)
    assert (box.old / "notes.md").read_text() == "mine"
    assert (box.path / "data0.txt").read_text() == "old"


def test_a_missing_folder_with_a_foreign_old_beside_it_is_not_renamed_back(box, tmp_path):
    box.old.mkdir()
    (box.old / "notes.md").write_text("mine")

    def read():
        raise LookupError("nothing")

    with pytest.raises(LookupError):
        box.read(read, LookupError, timeout=1)
    assert names_in(tmp_path) == [".box-old"]


def test_a_read_that_works_or_fails_with_no_save_about_takes_no_lock(box, tmp_path):
    box.replace(writer("x"), timeout=1)
    assert box.read(lambda: "read", LookupError, timeout=1) == "read"
    calls = []

    def fails():
        calls.append(1)
        raise LookupError("damaged")

    with pytest.raises(LookupError, match="damaged"):
        box.read(fails, LookupError, timeout=1)
    assert calls == [1] and names_in(tmp_path) == ["box"]  # no retry, no lock file


# ------------------------------------------------------------------ one file at a time
def test_write_text_atomically_writes_and_replaces_a_whole_file(tmp_path):
    target = tmp_path / "run.txt"
    assert write_text_atomically(str(target), "第一\n") == target
    assert write_text_atomically(target, "第二\n") == target
    assert target.read_text(encoding="utf-8") == "第二\n" and names_in(tmp_path) == ["run.txt"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_write_text_atomically_gives_the_permissions_of_an_ordinary_open(tmp_path, umask,
                                                                        mode):
    old = os.umask(umask)
    try:
        path = write_text_atomically(tmp_path / "run.txt", "x")
        with open(tmp_path / "plain.txt", "w") as out:
            out.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode) == mode


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "run.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomically(target, "new \ud800")  # a lone surrogate: not UTF-8
    assert target.read_text(encoding="utf-8") == "old" and names_in(tmp_path) == ["run.txt"]

    def no_room(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_room)
    with pytest.raises(OSError, match="No space left"):
        write_text_atomically(target, "new")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "old" and names_in(tmp_path) == ["run.txt"]


def test_an_interrupted_write_leaves_no_temporary(tmp_path, monkeypatch):
    real_fdopen = os.fdopen

    class Interrupted:
        def __init__(self, *args, **kwargs):
            self.file = real_fdopen(*args, **kwargs)

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            self.file.close()

        def write(self, text):
            self.file.write(text[:3])
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomically(tmp_path / "run.txt", "a long text")
    assert names_in(tmp_path) == []


def test_a_target_in_a_missing_folder_is_an_error_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_text_atomically(tmp_path / "missing" / "run.txt", "x")
    assert names_in(tmp_path) == []
