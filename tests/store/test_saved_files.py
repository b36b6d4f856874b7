"""The files of a saved folder (course_lib.store.saved_files), read trusting nothing:
read_inside reads only a plain, regular file directly inside the folder (not ../x, /etc/x,
a symlink or a FIFO); NewFiles writes each name once with its SHA-256, and SavedFiles
refuses a file whose bytes changed by one, before parsing it."""

import hashlib
import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from course_lib.store.saved_files import (
    MANIFEST,
    NewFiles,
    PersistError,
    SavedFiles,
    is_plain_name,
    read_inside,
)

SHOWN = Path("kb")


@pytest.mark.parametrize("name", ["bm25-0.npz", "nodes.jsonl.gz", "长城.json", "a b", "x..y"])
def test_plain_names(name):
    assert is_plain_name(name)


@pytest.mark.parametrize("name", ["", ".", "..", ".hidden", "../x", "/etc/passwd", "sub/x",
                                  "sub\\x", "C:x", "a\0b"])
def test_names_that_could_mean_another_place_are_not_plain(name):
    assert not is_plain_name(name)


# ------------------------------------------------------------------ read_inside
@pytest.fixture()
def folder(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.json").write_bytes(b"[1]")
    (tmp_path / "secret.txt").write_bytes(b"outside")
    return kb


def test_read_inside_reads_a_regular_file_inside(folder):
    assert read_inside(folder, "a.json", SHOWN / "a.json") == b"[1]"


@pytest.mark.parametrize("name", ["../secret.txt", "ABSOLUTE", "sub/a.json", "..", ".a.json"])
def test_read_inside_refuses_a_name_that_could_point_elsewhere(folder, name):
    name = name.replace("ABSOLUTE", str(folder.parent / "secret.txt"))
    (folder / "sub").mkdir(exist_ok=True)
    (folder / "sub" / "a.json").write_bytes(b"[2]")
    with pytest.raises(PersistError, match="is not a plain file name inside the folder"):
        read_inside(folder, name, SHOWN / "x")


def test_read_inside_refuses_etc_passwd_by_name():
    with pytest.raises(PersistError, match=r"kb/x: '/etc/passwd' is not a plain file name"):
        read_inside(Path("/nonexistent"), "/etc/passwd", SHOWN / "x")


@pytest.mark.skipif(os.name != "posix", reason="symlinks and FIFOs need POSIX")
def test_read_inside_refuses_a_symlink_even_to_a_file_inside(folder):
    (folder / "out.json").symlink_to(folder.parent / "secret.txt")
    (folder / "in.json").symlink_to(folder / "a.json")
    for name in ("out.json", "in.json"):
        with pytest.raises(PersistError, match=f"kb/{name} is a symbolic link; a saved "
                                               "knowledge base holds plain files only"):
            read_inside(folder, name, SHOWN / name)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")
def test_read_inside_refuses_a_fifo_without_opening_it(folder):
    pipe = folder / "pipe.json"
    os.mkfifo(pipe)
    done, outcome = threading.Event(), []

    def read():
        try:
            read_inside(folder, "pipe.json", SHOWN / "pipe.json")
        except PersistError as error:
            outcome.append(str(error))
        finally:
            done.set()

    threading.Thread(target=read, daemon=True).start()
    if not done.wait(3):  # never expected: unblock the reader, then fail
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("read_inside blocked on a FIFO")
    assert outcome == ["kb/pipe.json is not a regular file"]


def test_read_inside_names_a_missing_file_and_a_folder(folder):
    with pytest.raises(PersistError, match="^kb/gone.json is missing$"):
        read_inside(folder, "gone.json", SHOWN / "gone.json")
    (folder / "sub").mkdir()
    with pytest.raises(PersistError, match="^kb/sub is not a regular file$"):
        read_inside(folder, "sub", SHOWN / "sub")


# ------------------------------------------------------------------ NewFiles, SavedFiles
@pytest.fixture()
def written(tmp_path):
    out = NewFiles(tmp_path)
    out.raw("raw.bin", b"\x00\x01\x02")
    out.json("words.json", ["长城", "茶"])
    out.npy("vectors.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
    out.sparse_matrix("bm25.npz", sparse.csr_matrix(np.eye(3)))
    out.jsonl_gz("nodes.jsonl.gz", [{"text": "a\u2028b"}, {"text": "c"}])
    return out


def test_every_file_written_has_its_checksum_and_reads_back(written, tmp_path):
    assert sorted(written.sha256) == ["bm25.npz", "nodes.jsonl.gz", "raw.bin", "vectors.npy",
                                      "words.json"]
    for name, digest in written.sha256.items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest
    files = SavedFiles(tmp_path, SHOWN, written.sha256)
    assert files.raw("raw.bin") == b"\x00\x01\x02"
    assert files.json("words.json", shape=[str]) == ["长城", "茶"]
    assert files.npy("vectors.npy").tolist() == [[0, 1, 2], [3, 4, 5]]
    assert (files.sparse_matrix("bm25.npz") != sparse.csr_matrix(np.eye(3))).nnz == 0
    # U+2028 inside a string is not a line break of JSON lines
    assert files.jsonl_gz("nodes.jsonl.gz", shape={"text": str}) == [{"text": "a\u2028b"},
                                                                     {"text": "c"}]
    files.check_unread()


def test_the_gzip_of_json_lines_is_the_same_bytes_each_time(tmp_path):
    digests = []
    for sub in ("one", "two"):
        (tmp_path / sub).mkdir()
        out = NewFiles(tmp_path / sub)
        out.jsonl_gz("n.jsonl.gz", [{"a": 1}])
        digests.append(out.sha256["n.jsonl.gz"])
    assert digests[0] == digests[1]  # no time stamp in the gzip header


@pytest.mark.parametrize("name", ["../x", ".hidden", MANIFEST, "INCOMPLETE", "raw.bin", ""])
def test_new_files_refuses_a_name_that_is_not_plain_reserved_or_written(written, name):
    with pytest.raises(ValueError, match="cannot save a file named"):
        written.raw(name, b"x")


def test_a_file_written_twice_is_refused_and_keeps_its_first_bytes(written, tmp_path):
    with pytest.raises(ValueError):
        written.json("words.json", ["other"])
    assert SavedFiles(tmp_path, SHOWN, written.sha256).json("words.json") == ["长城", "茶"]


def test_the_manifest_is_written_with_its_fields(tmp_path):
    out = NewFiles(tmp_path)
    out.raw("a.bin", b"a")
    out.manifest({"sha256": out.sha256, "名": 1})
    text = read_inside(tmp_path, MANIFEST, SHOWN / MANIFEST).decode("utf-8")
    assert json.loads(text) == {"sha256": out.sha256, "名": 1}
    assert "名" in text and text.count("\n") > 1  # readable: not escaped, indented
    assert MANIFEST not in out.sha256  # the manifest lists the others, not itself
    with pytest.raises(FileExistsError):  # written once, like every file
        out.manifest({})


@pytest.mark.parametrize("name", ["raw.bin", "words.json", "vectors.npy", "bm25.npz",
                                  "nodes.jsonl.gz"])
def test_a_single_changed_byte_is_refused_before_parsing(written, tmp_path, name):
    data = bytearray((tmp_path / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / name).write_bytes(bytes(data))
    files = SavedFiles(tmp_path, SHOWN, written.sha256)
    with pytest.raises(PersistError, match=rf"^kb/{name} is missing or damaged \(checksum "
                                           r"mismatch\)$"):
        getattr(files, {"raw.bin": "raw", "words.json": "json", "vectors.npy": "npy",
                        "bm25.npz": "sparse_matrix",
                        "nodes.jsonl.gz": "jsonl_gz"}[name])(name)
    with pytest.raises(PersistError, match="checksum mismatch"):
        files.check_unread()  # reading what is left finds it too


def test_a_file_not_listed_is_not_read_and_an_unread_one_is_checked(written, tmp_path):
    listed = {k: v for k, v in written.sha256.items() if k != "raw.bin"}
    files = SavedFiles(tmp_path, SHOWN, listed)
    with pytest.raises(PersistError, match=f"kb/raw.bin is not listed in {MANIFEST} with a "
                                           "checksum"):
        files.raw("raw.bin")
    files.json("words.json")
    assert files.unread == {"bm25.npz", "nodes.jsonl.gz", "vectors.npy"}
    (tmp_path / "vectors.npy").unlink()
    with pytest.raises(PersistError, match="kb/vectors.npy is missing"):
        files.check_unread()


@pytest.mark.parametrize("sha256, message", [
    ({"../x": "0" * 64}, r"kb/manifest.json lists '\.\./x', which is not a plain file name"),
    ({MANIFEST: "0" * 64}, "lists 'manifest.json', which is not a plain"),
    ({"INCOMPLETE": "0" * 64}, "lists 'INCOMPLETE', which is not a plain"),
    ({"a.bin": "0" * 63}, r"the checksum of 'a.bin' is not a SHA-256 \(64 hex digits\)"),
    ({"a.bin": "A" * 64}, "is not a SHA-256"),
])
def test_a_manifest_listing_a_bad_name_or_checksum_is_refused_at_once(tmp_path, sha256,
                                                                     message):
    with pytest.raises(PersistError, match=message):
        SavedFiles(tmp_path, SHOWN, sha256)


def test_a_matching_checksum_on_bytes_of_the_wrong_kind_is_refused_naming_the_file(tmp_path):
    out = NewFiles(tmp_path)
    out.raw("v.npy", b"not an array")
    out.raw("w.json", b'{"a": 1}')
    out.npy("z.npy", np.ones(2))
    files = SavedFiles(tmp_path, SHOWN, out.sha256)
    with pytest.raises(PersistError, match=r"^kb/v.npy is not a valid .npy array: "):
        files.npy("v.npy")
    with pytest.raises(PersistError, match=r"^kb/w.json is malformed: the words must be a "
                                           "list, got an object$"):
        files.json("w.json", shape=[str], what="the words")
    with pytest.raises(PersistError, match="kb/z.npy is not valid gzip-compressed UTF-8"):
        files.jsonl_gz("z.npy")
