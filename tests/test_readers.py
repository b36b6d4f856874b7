"""Readers (course_lib.readers): bad sources and files, each a clear error: the folder,
files= and texts= given to Document, and the readers registered for a suffix."""

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bad_inputs import Case, clear_error_test, safe_fifo

from course_lib import DocNode, Document, readers, register_reader

# ==================================================================== bad inputs
# Readers take regular files only, follow no symlink out of the corpus folder, refuse
# files over MAX_FILE_BYTES, name the file that is not UTF-8, and refuse sources that
# would silently read the wrong thing. FIFO and symlink cases need POSIX.

def _posix() -> None:
    if os.name != "posix" or not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs and symlinks need a POSIX system")


def _corpus(tmp_path: Path, **files: str | bytes) -> Path:
    """A folder ``corpus`` holding ``files`` (name -> text, or bytes as they are)."""
    folder = tmp_path / "corpus"
    folder.mkdir(exist_ok=True)
    for name, content in files.items():
        path = folder / name.replace("__", ".")
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def _link(path: Path, target: str | Path) -> Path:
    _posix()
    path.symlink_to(target)
    return path


def _as_errors(call: Callable[[], Any]) -> Any:
    """Run ``call`` with warnings raised as errors (to test a skip's one warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


def _limit(size: int, call: Callable[[], Any]) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(readers, "MAX_FILE_BYTES", size)
        return call()


def _with_reader(suffix: str, reader: Callable[[Path], Any], call: Callable[[], Any]) -> Any:
    register_reader(suffix, reader)
    try:
        return call()
    finally:
        readers.READERS.pop(suffix)


def _grows_while_read(tmp_path: Path) -> Any:
    """The file's size says 0 when opened, but more bytes than the limit arrive."""
    path = _corpus(tmp_path, grows__txt="x" * 64) / "grows.txt"
    real_fstat = os.fstat

    def fstat_says_empty(fd: int) -> os.stat_result:
        info = list(real_fstat(fd))
        info[6] = 0  # st_size
        return os.stat_result(info)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(readers, "MAX_FILE_BYTES", 10)
        patch.setattr(readers.os, "fstat", fstat_says_empty)
        return readers.read_limited(path)


GBK = "长城很长。".encode("gbk")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


READER_CASES: list[Case] = [Case("readers", *c) for c in [
    # -- regular files only: a FIFO never blocks
    ("fifo-in-files", lambda t: Document(files=[safe_fifo(_corpus(t) / "pipe.txt")]),
     ValueError, r"pipe\.txt' is a FIFO; readers read regular files only"),
    ("fifo-only-in-folder", lambda t: (safe_fifo(_corpus(t) / "pipe.txt"), Document(_corpus(t))),
     ValueError, r"holds no readable files.*skipped: pipe\.txt \(a FIFO, not a regular file\)"),
    ("fifo-in-folder-skipped-with-a-warning",
     lambda t: (safe_fifo(_corpus(t, a__txt="甲。") / "pipe.txt"),
                _as_errors(lambda: Document(_corpus(t)))),
     UserWarning, r"corpus.*skipped 1 path\(s\): pipe\.txt.*regular files inside the folder"),
    # -- no symlink leaves the folder
    ("symlink-to-dev-zero-in-folder",
     lambda t: (_link(_corpus(t, a__txt="甲。") / "zero.txt", "/dev/zero"),
                _as_errors(lambda: Document(_corpus(t)))),
     UserWarning, r"zero\.txt \(a symlink leaving the folder, to '/dev/zero'\).*inside the folder"),
    ("symlink-to-dev-zero-only",
     lambda t: (_link(_corpus(t) / "zero.txt", "/dev/zero"), Document(_corpus(t))),
     ValueError, r"no readable files.*zero\.txt \(a symlink leaving the folder"),
    ("symlink-to-dev-zero-in-files",
     lambda t: Document(files=[_link(t / "zero.txt", "/dev/zero")]),
     ValueError, r"zero\.txt' is a character device; readers read regular files only"),
    ("symlink-to-private-file-outside",
     lambda t: ((t / "private.txt").write_text("秘密。", encoding="utf-8"),
                _link(_corpus(t, a__txt="甲。") / "notes.txt", t / "private.txt"),
                _as_errors(lambda: Document(_corpus(t)))),
     UserWarning, r"notes\.txt \(a symlink leaving the folder, to .*private\.txt'\)"),
    ("symlinked-folder-not-followed",
     lambda t: ((t / "elsewhere").mkdir(),
                _link(_corpus(t, a__txt="甲。") / "more", t / "elsewhere"),
                _as_errors(lambda: Document(_corpus(t)))),
     UserWarning, r"more \(a symlinked folder; not followed\)"),
    ("broken-symlink-in-files",
     lambda t: Document(files=[_link(t / "gone.txt", t / "nothing.txt")]),
     FileNotFoundError, r"gone\.txt' is a broken symlink \(its target .*nothing\.txt"),
    # -- a size limit, checked before reading and while reading
    ("oversized-file-in-folder",
     lambda t: _limit(10, lambda: Document(_corpus(t, big__txt="x" * 20))),
     ValueError, r"big\.txt' is 20 bytes, above the limit of 10 bytes.*MAX_FILE_BYTES = 20"),
    ("oversized-file-in-files",
     lambda t: _limit(10, lambda: Document(files=[_corpus(t, big__md="x" * 11) / "big.md"])),
     ValueError, r"big\.md' is 11 bytes, above the limit of 10 bytes.*raise the limit"),
    ("file-growing-while-read", _grows_while_read,
     ValueError, r"grows\.txt' is more than 10 \(it grew while being read\).*MAX_FILE_BYTES"),
    # -- not UTF-8: the error names the file and what to do
    ("gbk-file-among-files",
     lambda t: Document(files=[_corpus(t, a__txt="甲。", b__txt=GBK) / n
                               for n in ("a.txt", "b.txt")]),
     UnicodeDecodeError, r"b\.txt' is not utf-8 text.*convert it to UTF-8.*text_reader\('gbk'\)"),
    ("gbk-file-in-folder", lambda t: Document(_corpus(t, a__txt="甲。", gbk__txt=GBK)),
     UnicodeDecodeError, r"gbk\.txt' is not utf-8 text.*register_reader\('\.txt'"),
    ("binary-file-as-txt", lambda t: Document(_corpus(t, a__txt="甲。", image__txt=PNG)),
     UnicodeDecodeError, r"image\.txt' is not utf-8 text.*remove it if it is binary"),
    ("utf16-file-as-txt",
     lambda t: Document(_corpus(t, a__txt="甲。", wide__txt="tea".encode("utf-16-le"))),
     ValueError, r"wide\.txt' holds a NUL character at position 1.*convert it to UTF-8"),
    ("gbk-file-custom-reader-decode-error",
     lambda t: _with_reader(".gb", lambda p: p.read_text(encoding="utf-8"),
                            lambda: Document(files=[_corpus(t, x__gb=GBK) / "x.gb"])),
     UnicodeDecodeError, r"x\.gb' is not utf-8 text.*register_reader\('\.gb'"),
    ("unknown-encoding", lambda t: readers.text_reader("gbk2"),
     ValueError, r"text_reader: unknown encoding 'gbk2'; give one Python knows"),
    # -- sources that would silently read the wrong thing
    ("dataset-path-empty-string", lambda t: Document(""),
     ValueError, r"dataset_path is empty.*current folder.*name the folder"),
    ("dataset-path-a-list", lambda t: Document(["a.txt"]),
     TypeError, r"dataset_path must be a folder path \(str or pathlib\.Path\).*files="),
    ("dataset-path-a-file", lambda t: Document(_corpus(t, a__txt="甲。") / "a.txt"),
     NotADirectoryError, r"a\.txt' is a file, not a folder.*files=\["),
    ("dataset-path-missing", lambda t: Document(t / "nope"),
     FileNotFoundError, r"nope' is not a folder: it does not exist; give an existing folder"),
    ("texts-a-str", lambda t: Document(texts="长城很长。"),
     TypeError, r"texts= got a single str; give a list of strings.*\{name: text\} dict"),
    ("texts-bytes", lambda t: Document(texts=b"abc"),
     TypeError, r"texts= got a single bytes; give a list of strings"),
    ("texts-a-set", lambda t: Document(texts={"甲", "乙"}),
     TypeError, r"texts= got a set, which has no order.*give a list of strings"),
    ("texts-dict-int-names", lambda t: Document(texts={1: "甲。"}),
     TypeError, r"texts= names must be strings, got int 1.*\{'name\.txt': text\}"),
    ("texts-dict-int-values", lambda t: Document(texts={"a.txt": 3}),
     TypeError, r"texts must hold strings, got int for 'a\.txt'"),
    ("texts-empty-dict", lambda t: Document(texts={}),
     ValueError, r"texts= is empty: give at least one text"),
    ("texts-empty-list", lambda t: Document(texts=[]),
     ValueError, r"texts= is empty: give at least one text"),
    ("files-a-str", lambda t: Document(files="a.txt"),
     TypeError, r"files= must be a list of file paths, got a single str 'a\.txt'.*"
                r"files=\['a\.txt'\]"),
    ("files-a-path", lambda t: Document(files=t / "a.txt"),
     TypeError, r"files= must be a list of file paths, got a single .*Path.*files=\["),
    ("files-empty", lambda t: Document(files=[]),
     ValueError, r"files= is empty: give at least one file path"),
    ("files-missing-file",
     lambda t: Document(files=[_corpus(t, a__txt="甲。") / "a.txt", t / "nope.txt"]),
     FileNotFoundError, r"files=: '.*nope\.txt' does not exist; give existing files"),
    ("files-a-folder", lambda t: Document(files=[_corpus(t, a__txt="甲。")]),
     IsADirectoryError, r"files=: '.*corpus' is a folder; read it with Document\("),
    ("files-twice", lambda t: Document(files=[_corpus(t, a__txt="甲。") / "a.txt"] * 2),
     ValueError, r"files= names '.*a\.txt' twice; give each file once"),
    ("files-holding-an-int", lambda t: Document(files=[3]),
     TypeError, r"files=\[\.\.\.\] item 0 is int 3; give file paths"),
    # -- lone surrogates: named with the document and the position
    ("lone-surrogate-in-texts", lambda t: Document(texts={"a.txt": "长城\ud800很长。"}),
     ValueError, r"texts\['a\.txt'\] holds a lone surrogate '\\ud800' at position 2.*remove it"),
    ("lone-surrogate-from-a-reader",
     lambda t: _with_reader(".sur", lambda p: "甲\udfff",
                            lambda: Document(files=[_corpus(t, x__sur="甲") / "x.sur"])),
     ValueError, r"file '.*x\.sur' holds a lone surrogate '\\udfff' at position 1"),
    ("reader-returning-bytes",
     lambda t: _with_reader(".raw", lambda p: p.read_bytes(),
                            lambda: Document(files=[_corpus(t, x__raw="甲") / "x.raw"])),
     TypeError, r"the reader for '\.raw' returned bytes for '.*x\.raw'; a reader must return"),
    ("register-reader-not-callable", lambda t: register_reader(".x", "utf-8"),
     TypeError, r"reader for '\.x' must be a function path -> text, got str"),
    # -- readers returning parts: a non-empty list of str / DocNode, no global metadata
    ("reader-returning-an-empty-list",
     lambda t: _with_reader(".rows", lambda p: [],
                            lambda: Document(files=[_corpus(t, x__rows="甲") / "x.rows"])),
     ValueError, r"the reader for '\.rows' returned an empty list for '.*x\.rows'; a reader "
                 r"must return the file's text as a str, or a list of parts"),
    ("reader-returning-ints-in-its-list",
     lambda t: _with_reader(".rows", lambda p: ["甲", 2],
                            lambda: Document(files=[_corpus(t, x__rows="甲") / "x.rows"])),
     TypeError, r"part 1 of '.*x\.rows' \(reader for '\.rows'\) is int 2; a reader must"),
    ("reader-part-with-global-metadata",
     lambda t: _with_reader(".rows", lambda p: [DocNode("甲", global_metadata={"a": 1})],
                            lambda: Document(files=[_corpus(t, x__rows="甲") / "x.rows"])),
     ValueError, r"part 0 of '.*x\.rows' .* carries global_metadata \{'a': 1\}; "
                 r"global_metadata belongs to the whole Document"),
]]


test_bad_input_gets_a_clear_error = clear_error_test(READER_CASES)


def test_readers_fifo_and_outside_links_are_skipped_with_one_warning(tmp_path: Path) -> None:
    folder = _corpus(tmp_path, a__txt="甲。", b__md="乙。")
    safe_fifo(folder / "pipe.txt")
    _link(folder / "zero.txt", "/dev/zero")
    _link(folder / "inside.txt", folder / "a.txt")  # stays in the folder: read
    with pytest.warns(UserWarning) as caught:
        roots = Document(folder).get_nodes("root")
    assert [r.uid for r in roots] == ["a.txt", "b.md", "inside.txt"]
    assert len(caught) == 1 and "skipped 2 path(s)" in str(caught[0].message)
