"""Bad input and faults across the public API and the command line: each one a clear error.

A matrix of cases. Each names what it calls, the exception it must raise and a regular
expression its message must match — the argument or file it names and what is allowed.
A case whose fault could also leave something behind (a half-written file, a hang)
checks that inside its ``call``.

Areas (each section below holds its own cases): LLM endpoints, readers and documents,
retrieval inputs, fusion / reranking / widgets, datasets, the command line, stores.
"""

from __future__ import annotations

import functools
import math
import os
import re
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai_standin import StandIn

from course_lib import DocNode, Document, RemoteTimeout, Retriever, readers, register_reader
from course_lib._support.validation import MAX_QUERY_CHARS
from course_lib.embeddings import Embedder, HTTPEmbedder, OpenAIEmbedder
from course_lib.fusion import MultiRetriever, reciprocal_rank_fusion, union
from course_lib.lab.cli import main as cli_main
from course_lib.lab.datasets import DatasetFormatError, KnowledgeBase, load_squad
from course_lib.lab.widgets import explore, query_explorer, threshold_slider
from course_lib.llm import LLMError, OfflineLLM, OpenAIChat, get_llm
from course_lib.rag import MultiPathRAG
from course_lib.rerank import FeatureReranker, KeywordFilter, RerankEndpoint, Reranker
from course_lib.similarity import get_similarity


@dataclass(frozen=True)
class Case:
    """``call(tmp_path)`` must raise ``error`` with a message matching ``match``."""

    area: str
    name: str
    call: Callable[[Path], Any]
    error: type[BaseException] | tuple[type[BaseException], ...]
    match: str


# ==================================================================== area: llm
# A chat call ends within its deadline against a silent or a dripping server; partial
# settings name the missing variable; a malformed URL or a bad number fails before any
# request. The hang cases assert a bound (deadline + margin) inside their call: a bound
# on a hang, not a speed test. Without the deadline the drip runs for ~30 s.



_LLM_SETTINGS = ("COURSE_LLM_BASE_URL", "COURSE_LLM_MODEL", "COURSE_LLM_API_KEY")
_NOWHERE = "http://127.0.0.1:9/v1"  # valid, and nothing listens: these cases send nothing
_HANG_MARGIN = 1.5  # seconds past the deadline a hang case may take before it counts as a hang


@functools.cache
def _llm_server(behaviour: str) -> StandIn:
    """One stand-in per behaviour for the run: ``silent`` answers only after 5 s, ``drip``
    sends its answer a byte per 0.1 s. Never rescripted, so a late answer harms nothing."""
    server = StandIn()
    server.delay, server.drip = (5.0, 0.0) if behaviour == "silent" else (0.0, 0.1)
    return server


def _hang(behaviour: str, bound: float, **options: Any) -> Callable[[Path], Any]:
    """A chat call on the ``behaviour`` server that must fail within ``bound`` seconds."""
    def call(tmp_path: Path) -> None:
        chat = OpenAIChat("m", base_url=_llm_server(behaviour).url, **options)
        start = time.monotonic()
        try:
            chat.chat("x")
        finally:
            elapsed = time.monotonic() - start
            assert elapsed < bound + _HANG_MARGIN, f"not cut off after {elapsed:.1f} s"
    return call


def _settings(call: Callable[[], Any], **settings: str) -> Callable[[Path], Any]:
    """``call()`` with exactly these COURSE_LLM_* variables set."""
    def run(tmp_path: Path) -> Any:
        with pytest.MonkeyPatch.context() as patch:
            for name in _LLM_SETTINGS:
                patch.delenv(name, raising=False)
            for name, value in settings.items():
                patch.setenv(name, value)
            return call()
    return run


def _chat(**options: Any) -> Callable[[Path], Any]:
    return lambda tmp_path: OpenAIChat(**{"model": "m", "base_url": _NOWHERE, **options})


def _bad_url(name: str, url: Any, problem: str) -> Case:
    return Case("llm", f"base-url-{name}", _chat(base_url=url), ValueError,
                r"base_url must be an http:// or https:// URL with a host, e\.g\. "
                rf"'https://api\.openai\.com/v1'.*; got {re.escape(repr(url))}: .*{problem}")


_SECONDS = r" must be a number of seconds in \(0, 3600\], got "
_LLM_TOO_SLOW = r"pass larger timeout= and deadline= \(seconds\) to OpenAIChat or get_llm"

LLM_CASES: list[Case] = [
    # Hangs: a per-read timeout never trips on a drip; the try's timeout and the deadline do.
    Case("llm", "drip-cut-off-by-timeout", _hang("drip", 0.5, timeout=0.5, retries=0),
         LLMError, r"failed after 1 try: APITimeoutError.*within timeout=0\.5 s per try; "
                   r"pass a larger timeout="),
    Case("llm", "drip-cut-off-by-deadline", _hang("drip", 0.6, timeout=30, deadline=0.6),
         LLMError, r"no complete reply within the deadline of 0\.6 s \(1 try.*" + _LLM_TOO_SLOW),
    Case("llm", "silent-cut-off-by-deadline-over-retries",
         _hang("silent", 1.2, timeout=0.2, deadline=1.2, retries=3),
         LLMError, r"deadline of 1\.2 s \(\d tries, each allowed timeout=0\.2 s.*" + _LLM_TOO_SLOW),
    Case("llm", "silent-cut-off-by-timeout", _hang("silent", 0.4, timeout=0.4, retries=0),
         LLMError, r"APITimeoutError.*within timeout=0\.4 s per try; pass a larger timeout="),
    # Partial settings: name what is missing, what is set, and both ways out.
    Case("llm", "settings-url-and-key-no-model",
         _settings(get_llm, COURSE_LLM_BASE_URL=_NOWHERE, COURSE_LLM_API_KEY="k"), LLMError,
         r"COURSE_LLM_MODEL is not set \(set: COURSE_LLM_BASE_URL, COURSE_LLM_API_KEY\)\. "
         r"Set COURSE_LLM_MODEL too .*or unset .* to use the offline stand-in"),
    Case("llm", "settings-model-and-key-no-url",
         _settings(get_llm, COURSE_LLM_MODEL="m", COURSE_LLM_API_KEY="k"), LLMError,
         r"COURSE_LLM_BASE_URL is not set \(set: COURSE_LLM_MODEL, COURSE_LLM_API_KEY\)\. "
         r"Set COURSE_LLM_BASE_URL too"),
    Case("llm", "settings-url-only", _settings(get_llm, COURSE_LLM_BASE_URL=_NOWHERE),
         LLMError, r"COURSE_LLM_MODEL is not set \(set: COURSE_LLM_BASE_URL\)\. Set "
                   r"COURSE_LLM_MODEL too \(e\.g\. COURSE_LLM_MODEL=qwen-plus"),
    Case("llm", "settings-key-only", _settings(get_llm, COURSE_LLM_API_KEY="k"), LLMError,
         r"COURSE_LLM_BASE_URL and COURSE_LLM_MODEL are not set \(set: COURSE_LLM_API_KEY\).*"
         r"or unset COURSE_LLM_API_KEY to use the offline stand-in"),
    Case("llm", "settings-model-argument-no-url", _settings(lambda: get_llm(model="m")),
         LLMError, r"COURSE_LLM_BASE_URL is not set \(set: COURSE_LLM_MODEL\)"),
    Case("llm", "settings-no-url-for-openaichat",
         _settings(lambda: OpenAIChat("m"), COURSE_LLM_API_KEY="k"), LLMError,
         r"OpenAIChat needs a base URL \(base_url= or COURSE_LLM_BASE_URL\): set "),
    Case("llm", "settings-malformed-url",
         _settings(get_llm, COURSE_LLM_BASE_URL="htp//127.0.0.1:8000/v1", COURSE_LLM_MODEL="m"),
         ValueError, r"COURSE_LLM_BASE_URL must be an http:// or https:// URL with a host, "
                     r"e\.g\. .*got 'htp//127\.0\.0\.1:8000/v1': it does not start with http://"),
    # Malformed URLs, refused before any request (was: 8 s of retries, "Connection error.").
    _bad_url("no-scheme", "htp//127.0.0.1:8000/v1", "does not start with http:// or https://"),
    _bad_url("host-and-port-only", "localhost:11434/v1", "does not start with http:// or https://"),
    _bad_url("scheme-htp", "htp://127.0.0.1:8000/v1", "scheme 'htp' is not http or https"),
    _bad_url("no-host", "http:///v1", "no host name"),
    _bad_url("port-not-a-number", "http://127.0.0.1:80a/v1", "Port could not be cast"),
    _bad_url("space", "http://exa mple.com/v1", "contains a space"),
    _bad_url("endpoint-path",
             "https://api.openai.com/v1/chat/completions", "which the client adds itself"),
    Case("llm", "base-url-not-a-string", _chat(base_url=8000), TypeError,
         r"base_url must be a URL string \(e\.g\. 'https://api\.openai\.com/v1'.*\), got int"),
    # Numbers: seconds in (0, 3600], retries in [0, 10].
    Case("llm", "timeout-negative", _chat(timeout=-1), ValueError, "timeout" + _SECONDS + "-1"),
    Case("llm", "timeout-nan", _chat(timeout=float("nan")), ValueError,
         "timeout" + _SECONDS + "nan"),
    Case("llm", "timeout-string", _chat(timeout="5"), ValueError, "timeout" + _SECONDS + "'5'"),
    Case("llm", "timeout-infinite", _chat(timeout=float("inf")), ValueError,
         "timeout" + _SECONDS + "inf"),
    Case("llm", "deadline-zero", _chat(deadline=0), ValueError, "deadline" + _SECONDS + "0"),
    Case("llm", "retries-negative", _chat(retries=-1), ValueError,
         r"retries must be an integer in \[0, 10\], got -1"),
    Case("llm", "retries-float", _chat(retries=2.5), ValueError,
         r"retries must be an integer in \[0, 10\], got 2\.5"),
    Case("llm", "retries-string", _chat(retries="3"), ValueError,
         r"retries must be an integer in \[0, 10\], got '3'"),
    Case("llm", "temperature-nan", _chat(temperature=float("nan")), ValueError,
         r"temperature must be a number in \[0, 2\], got nan"),
    Case("llm", "model-empty", _chat(model=" "), ValueError,
         r"model is empty: give the model's name, e\.g\. 'qwen-plus'"),
    Case("llm", "prompt-not-a-string", lambda tmp_path: OpenAIChat(
         "m", base_url=_NOWHERE).chat(["长城"]), TypeError, r"prompt must be a string, got list"),
]


# The embedding and rerank endpoints keep the same rules as the chat client: one name
# (retries=), one check of timeout= and deadline=, and a call cut off at its deadline.
class _Texts(HTTPEmbedder):
    def request_body(self, texts: list[str], is_query: bool) -> dict[str, Any]:
        return {"texts": texts}

    def parse_vectors(self, reply: Any) -> Any:
        return [item["embedding"] for item in reply["embeddings"]]


_REMOTE = {  # each client: its call of ["x"], given the server's base URL and options
    "openai-embedder": lambda base, **o: OpenAIEmbedder("m", base_url=base, **o)(["x"]),
    "http-embedder": lambda base, **o: _Texts(base + "/custom/embed", **o)(["x"]),
    "rerank-endpoint": lambda base, **o: RerankEndpoint("m", base_url=base, **o)("q", ["x"]),
}


def _remote(client: str, behaviour: str | None = None, bound: float = 0.0,
            **options: Any) -> Callable[[Path], Any]:
    """``client``'s call on the ``behaviour`` server (or on nothing); on a server, it must
    fail within ``bound`` seconds."""
    def call(tmp_path: Path) -> None:
        base = _llm_server(behaviour).url if behaviour else _NOWHERE
        start = time.monotonic()
        try:
            _REMOTE[client](base, **options)
        finally:
            elapsed = time.monotonic() - start
            assert not behaviour or elapsed < bound + _HANG_MARGIN, f"{elapsed:.1f} s"
    return call


REMOTE_CASES: list[Case] = [
    Case("remote", "openai-embedder-max-retries", _remote("openai-embedder", max_retries=1),
         TypeError, r"OpenAIEmbedder takes retries=, not max_retries=: the one name"),
    *[Case("remote", f"{client}-{name}", _remote(client, **{argument: value}), ValueError,
           match) for client in _REMOTE for name, argument, value, match in [
        ("timeout-zero", "timeout", 0, "timeout" + _SECONDS + "0"),
        ("deadline-string", "deadline", "5", "deadline" + _SECONDS + "'5'"),
        ("deadline-nan", "deadline", float("nan"), "deadline" + _SECONDS + "nan"),
        ("retries-bool", "retries", True, r"retries must be an integer in \[0, 10\], got True")]],
    Case("remote", "openai-embedder-drip-cut-off-by-timeout",
         _remote("openai-embedder", "drip", 0.5, timeout=0.5, retries=0), RemoteTimeout,
         r"failed after 1 try: APITimeoutError.*within timeout=0\.5 s per try"),
    Case("remote", "http-embedder-drip-cut-off-by-deadline",
         _remote("http-embedder", "drip", 0.6, timeout=30, deadline=0.6), RemoteTimeout,
         r"gave no complete reply within the deadline of 0\.6 s \(1 try.*pass larger "
         r"timeout= and deadline= \(seconds\) to _Texts"),
    Case("remote", "rerank-silent-cut-off-by-deadline-over-retries",
         _remote("rerank-endpoint", "silent", 1.2, timeout=0.2, deadline=1.2, retries=3),
         RemoteTimeout, r"rerank endpoint .* deadline of 1\.2 s \(\d tries, each allowed "
                        r"timeout=0\.2 s.*to RerankEndpoint"),
]

# ==================================================================== area: readers
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


def _fifo(path: Path) -> Path:
    """A FIFO at ``path``. Should a reader ever block on it again, a thread opens its
    write end after 5 s, so the test fails instead of hanging."""
    _posix()
    os.mkfifo(path)

    def unblock() -> None:
        threading.Event().wait(5)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # nobody is blocked on it (ENXIO), or it is gone

    threading.Thread(target=unblock, daemon=True).start()
    return path


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


def _transform(transform: Callable[[Any], Any], **options: Any) -> Any:
    doc = Document(texts={"a.txt": "长城很长。\n茶很香。"})
    doc.create_node_group("bad", transform=transform, **options)
    return doc.get_nodes("bad")


GBK = "长城很长。".encode("gbk")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
READER_CASES: list[Case] = [Case("readers", *c) for c in [
    # -- regular files only: a FIFO never blocks
    ("fifo-in-files", lambda t: Document(files=[_fifo(_corpus(t) / "pipe.txt")]),
     ValueError, r"pipe\.txt' is a FIFO; readers read regular files only"),
    ("fifo-only-in-folder", lambda t: (_fifo(_corpus(t) / "pipe.txt"), Document(_corpus(t))),
     ValueError, r"holds no readable files.*skipped: pipe\.txt \(a FIFO, not a regular file\)"),
    ("fifo-in-folder-skipped-with-a-warning",
     lambda t: (_fifo(_corpus(t, a__txt="甲。") / "pipe.txt"),
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
    ("lone-surrogate-from-a-transform", lambda t: _transform(lambda s: ["茶\ud800"]),
     ValueError, r"node 0 made by transform \S*<lambda> of group 'bad' from 'a\.txt' holds a "
                 r"lone surrogate"),
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
    # -- global_metadata: a dict of JSON values with string keys
    ("global-metadata-a-list", lambda t: Document(texts=["甲"], global_metadata=["CC0"]),
     TypeError, r"global_metadata must be a dict such as \{'source': 'CMRC 2018'\}, got list"),
    ("global-metadata-int-key", lambda t: Document(texts=["甲"], global_metadata={1: "a"}),
     TypeError, r"global_metadata keys must be strings, got int 1"),
    ("global-metadata-not-json",
     lambda t: Document(texts=["甲"], global_metadata={"files": {Path("a")}}),
     TypeError, r"global_metadata\['files'\] is a set, which JSON cannot hold"),
    ("transform-returning-its-own-global-metadata",
     lambda t: _transform(lambda s: [DocNode(s, global_metadata={"licence": "x"})]),
     ValueError, r"transform \S*<lambda> of group 'bad' returned a DocNode with its own "
                 r"global_metadata .* put facts about this node in its metadata"),
    # -- transforms: name the transform, the group and what it must return
    ("transform-returning-docnode-of-int", lambda t: _transform(lambda s: [DocNode(123)]),
     TypeError, r"transform \S*<lambda> of group 'bad' returned a DocNode whose text is int "
                r"\(123\) for parent node 'a\.txt'; it must return str, a DocNode whose text"),
    ("transform-returning-a-dict", lambda t: _transform(lambda s: {"text": s}),
     TypeError, r"transform \S*<lambda> of group 'bad' must return str, DocNode or a list of "
                r"them \(or None\), got dict"),
    ("transform-returning-ints", lambda t: _transform(lambda s: [1, 2]),
     TypeError, r"transform \S*<lambda> of group 'bad' returned int 1 inside its list.*"
                r"expected str or DocNode"),
]]


def _split_on_text_of_node(node: str) -> list[str]:
    return node.text.split("\n")  # a str has no .text: trans_node=True was forgotten


@pytest.mark.parametrize("workers", [0, 2], ids=["serial", "threads"])
def test_readers_transform_raising_keeps_its_error_with_a_note(workers: int) -> None:
    with pytest.raises(AttributeError, match="'str' object has no attribute 'text'") as raised:
        _transform(_split_on_text_of_node, num_workers=workers)
    note = " ".join(raised.value.__notes__)
    assert "transform _split_on_text_of_node of node group 'bad'" in note
    assert "parent node 'a.txt'" in note and "pass trans_node=True" in note


def test_readers_fifo_and_outside_links_are_skipped_with_one_warning(tmp_path: Path) -> None:
    folder = _corpus(tmp_path, a__txt="甲。", b__md="乙。")
    _fifo(folder / "pipe.txt")
    _link(folder / "zero.txt", "/dev/zero")
    _link(folder / "inside.txt", folder / "a.txt")  # stays in the folder: read
    with pytest.warns(UserWarning) as caught:
        roots = Document(folder).get_nodes("root")
    assert [r.uid for r in roots] == ["a.txt", "b.md", "inside.txt"]
    assert len(caught) == 1 and "skipped 2 path(s)" in str(caught[0].message)

# ==================================================================== area: retrieval




class _Utf8Embedder(Embedder):
    """A stand-in dense embedder that, like every real one (e5, USE, an endpoint), needs
    the text's UTF-8 bytes: a lone surrogate would fail in ``encode``, not in a check."""

    name, dim = "utf8-stand-in", 8

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.array([np.bincount(np.frombuffer(t.encode("utf-8"), np.uint8) % 8,
                                       minlength=8) + 1.0 for t in texts])


def _ret_doc(embed: bool = False, built: bool = False) -> Document:
    """Two files cut into lines, and a group whose transform keeps nothing."""
    doc = Document(texts={"a.txt": "长城东起山海关。\n故宫在北京。", "b.txt": "普洱是黑茶。"},
                   embed=_Utf8Embedder() if embed else None)
    doc.create_node_group("line", transform=lambda text: text.split("\n"))
    doc.create_node_group("nothing", transform=lambda text: [])
    if built:
        doc.get_nodes("line"), doc.get_nodes("nothing")
    return doc


def _bm25(query: Any = "长城", **kwargs: Any) -> Callable[[Path], Any]:
    """Build a BM25 retriever over ``line`` with ``kwargs`` and ask it ``query``."""
    return lambda t: Retriever(_ret_doc(), **{"group_name": "line",
                                              "similarity": "bm25_chinese", **kwargs})(query)


def _cosine(query: Any = "长城", **kwargs: Any) -> Callable[[Path], Any]:
    """The same through the dense (faiss) path."""
    return lambda t: Retriever(_ret_doc(embed=True), **{"group_name": "line",
                                                        "similarity": "cosine", **kwargs})(query)


_SURROGATE_AT_2 = r"query holds a lone surrogate '\\ud800' at position 2, which is not valid"
_EMPTY_GROUP = (r"node group 'nothing' has no nodes, so there is nothing to retrieve from: its "
                r"transform returned nothing .* check the transform")
_TOPK = r"topk must be an integer in \[1, 10000\], got "
_FILTER_KEY = (r"filters name metadata key\(s\) \['filename'\] that no node of group 'line' has "
               r"\(did you mean 'file_name'\?\); the keys its nodes have: \[.*'file_name'.*\]")
_SIMILARITY_TYPE = (r"similarity must be the name of a registered similarity \(a str\), one of "
                    r"\[.*'bm25_chinese'.*\]; got ")
_TOO_LONG = (rf"query has {MAX_QUERY_CHARS + 1:,} characters; the limit is {MAX_QUERY_CHARS:,} "
             r"\(MAX_QUERY_CHARS\), so that every retrieval path answers in bounded time and "
             r"memory .* ask with a shorter query")

RETRIEVAL_CASES: list[Case] = [Case("retrieval", *c) for c in [
    # -- filters: a typo is an error listing the keys, not a silent []
    ("filter-key-typo", _bm25(filters={"filename": ["a.txt"]}), ValueError, _FILTER_KEY),
    ("filter-key-typo-cosine", _cosine(filters={"filename": ["a.txt"]}), ValueError, _FILTER_KEY),
    ("filter-key-typo-group-already-built",  # checked when the retriever is made
     lambda t: Retriever(_ret_doc(built=True), "line", filters={"filename": ["a.txt"]}),
     ValueError, _FILTER_KEY),
    ("filter-value-unhashable", _bm25(filters={"file_name": [["a.txt"]]}), TypeError,
     r"filters\['file_name'\] must be a list of hashable values \(strings, numbers, tuples\).*"
     r"item 0 is a list: \['a\.txt'\]"),
    ("filter-value-a-dict-inside", _bm25(filters={"file_name": ["a.txt", {"b": 1}]}), TypeError,
     r"filters\['file_name'\] must be a list of hashable values .* item 1 is a dict"),
    ("filters-not-a-dict", _bm25(filters=["file_name"]), TypeError,
     r"filters must be a dict like \{'file_name': \['a\.txt'\]\}, got list"),
    ("filter-value-a-string", _bm25(filters={"file_name": "a.txt"}), TypeError,
     r"filters\['file_name'\] must be a list of allowed values, e\.g\. \{'file_name': "
     r"\['a\.txt'\]\}, got 'a\.txt'"),
    # -- similarity: a registered name
    ("similarity-a-list", _bm25(similarity=["bm25"]), TypeError,
     _SIMILARITY_TYPE + r"list \['bm25'\]\. To combine several, .*MultiRetriever"),
    ("similarity-none", _bm25(similarity=None), TypeError, _SIMILARITY_TYPE + "NoneType None"),
    ("similarity-unknown", _bm25(similarity="bm26"), ValueError,
     r"unknown similarity 'bm26'; choose one of \[.*'bm25'.*\] or register_similarity"),
    # -- topk: an integer in [1, 10000] (numpy integers count: see the test below)
    ("topk-bool", _bm25(topk=True), ValueError, _TOPK + "True"),
    ("topk-float", _bm25(topk=3.0), ValueError, _TOPK + r"3\.0"),
    ("topk-zero", _bm25(topk=0), ValueError, _TOPK + "0"),
    ("topk-too-big", _bm25(topk=10_001), ValueError, _TOPK + "10001"),
    ("topk-negative-at-retrieve",
     lambda t: Retriever(_ret_doc(), "line").retrieve("长城", topk=-1), ValueError, _TOPK + "-1"),
    # -- cut-offs: a number, not NaN, per known embed key
    ("cut-off-nan", _bm25(similarity_cut_off=math.nan), ValueError,
     r"similarity_cut_off must be a number, got nan \(NaN compares false with everything\)"),
    ("cut-off-string", _bm25(similarity_cut_off="0.5"), ValueError,
     r"similarity_cut_off must be a number, got '0\.5'"),
    ("cut-off-dict-unknown-key", _cosine(similarity_cut_off={"other": 0.5}), ValueError,
     r"similarity_cut_off names unknown embed key\(s\) \['other'\]; this retriever uses "
     r"\['default'\]"),
    ("cut-off-dict-nan-value", _cosine(similarity_cut_off={"default": math.nan}), ValueError,
     r"similarity_cut_off\['default'\] must be a number, got nan"),
    # -- queries: the same refusal on every path
    ("query-lone-surrogate-bm25", _bm25("长城\ud800"), ValueError, _SURROGATE_AT_2),
    ("query-lone-surrogate-bm25-char", _bm25("长城\ud800", similarity="bm25_char"), ValueError,
     _SURROGATE_AT_2),
    ("query-lone-surrogate-cosine", _cosine("长城\ud800"), ValueError, _SURROGATE_AT_2),
    ("query-lone-surrogate-embedder", lambda t: _Utf8Embedder().embed_query("猫\udfff"),
     ValueError, r"query holds a lone surrogate '\\udfff' at position 1, which is not valid"),
    ("texts-lone-surrogate-embedder", lambda t: _Utf8Embedder()(["猫", "狗\ud800"]),
     ValueError, r"texts\[1\] holds a lone surrogate '\\ud800' at position 1.*remove it"),
    ("query-too-long-bm25", _bm25("长" * (MAX_QUERY_CHARS + 1)), ValueError, _TOO_LONG),
    ("query-too-long-cosine", _cosine("长" * (MAX_QUERY_CHARS + 1)), ValueError, _TOO_LONG),
    ("query-empty", _bm25(""), ValueError, r"query is empty: give the question to retrieve for"),
    ("query-whitespace", _cosine(" \n\t"), ValueError, r"query is empty: give the question"),
    ("query-a-list", _bm25(["长城"]), TypeError, r"query must be a string, got list"),
    ("query-bytes", _cosine("长城".encode()), TypeError, r"query must be a string, got bytes"),
    # -- a group with no nodes: one clear error on every path
    ("empty-group-bm25", _bm25(group_name="nothing"), ValueError, _EMPTY_GROUP),
    ("empty-group-bm25-char", _bm25(group_name="nothing", similarity="bm25_char"), ValueError,
     _EMPTY_GROUP),
    ("empty-group-cosine", _cosine(group_name="nothing"), ValueError, _EMPTY_GROUP),
    ("empty-group-numpy-index", _cosine(group_name="nothing", index="numpy"), ValueError,
     _EMPTY_GROUP),
    ("empty-group-already-built", lambda t: Retriever(_ret_doc(built=True), "nothing"),
     ValueError, _EMPTY_GROUP),
    ("empty-group-index-layer",
     lambda t: _ret_doc().index("nothing").search(get_similarity("bm25"), "长城", 3),
     ValueError, _EMPTY_GROUP),
    # -- embed keys, indexes, groups
    ("embed-keys-unknown", _cosine(embed_keys=["nope"]), ValueError,
     r"unknown embed key\(s\) \['nope'\]; the document has \['default'\]"),
    ("embed-keys-a-string", _cosine(embed_keys="default"), TypeError,
     r"embed_keys must be a list of embed keys, e\.g\. \['default'\], got the string 'default'"),
    ("embed-keys-on-bm25", _bm25(embed_keys=["default"]), ValueError,
     r"embed_keys only apply to embedding similarities; 'bm25_chinese' works on text"),
    ("cosine-without-embed", _bm25(similarity="cosine"), ValueError,
     r"similarity 'cosine' needs vectors: create the Document with embed=\.\.\."),
    ("index-unknown", _cosine(index="faiss-gpu"), ValueError,
     r"index must be one of \('faiss', 'numpy', 'hnsw', 'milvus', 'map'\), got 'faiss-gpu'"),
    # -- index="map": a look-up by one key's exact value
    ("map-without-map-key", _bm25(index="map"), ValueError,
     r"index='map' looks nodes up by the exact value of one metadata key: give map_key="),
    ("map-key-without-map", _bm25(map_key="file_name"), ValueError,
     r"map_key= only applies to index='map' .* index='faiss' ranks by similarity"),
    ("map-key-not-a-string", _bm25(index="map", map_key=["file_name"]), TypeError,
     r"map_key must be a metadata key \(a non-empty string\), got \['file_name'\]"),
    ("map-key-typo", _bm25(index="map", map_key="filename"), ValueError,
     r"map_key 'filename' is in no node's metadata of group 'line' \(did you mean "
     r"'file_name'\?\); the keys its nodes have: \[.*\], or 'text'"),
    ("map-key-typo-group-already-built",
     lambda t: Retriever(_ret_doc(built=True), "line", index="map", map_key="filename"),
     ValueError, r"map_key 'filename' is in no node's metadata of group 'line'"),
    ("map-with-cut-off", _bm25(index="map", map_key="text", similarity_cut_off=0.5), ValueError,
     r"similarity_cut_off does not apply to index='map': a look-up scores nothing"),
    ("map-with-embed-keys", _cosine(index="map", map_key="text", embed_keys=["default"]),
     ValueError, r"embed_keys do not apply to index='map': a look-up uses no vectors"),
    ("map-on-an-empty-group", _bm25(group_name="nothing", index="map", map_key="text"),
     ValueError, _EMPTY_GROUP),
    ("index-milvus-without-store", _cosine(index="milvus"), ValueError,
     r"index='milvus' needs a vector store: Document\(\.\.\., store=MilvusStore\(\)\)"),
    ("group-unknown", _bm25(group_name="lines"), ValueError,
     r"unknown node group 'lines'; known groups: \[.*'line'.*\]"),
]]


@pytest.mark.parametrize("path", ["bm25_chinese", "bm25_char", "cosine"])
def test_retrieval_query_at_the_limit_and_numpy_topk_are_served(path: str) -> None:
    """The limit is inclusive, and ``topk=numpy.int64(2)`` is an integer like 2."""
    doc = _ret_doc(embed=path == "cosine")
    retriever = Retriever(doc, "line", path, topk=np.int64(2))
    assert retriever.topk == 2 and type(retriever.topk) is int
    assert len(retriever("长城" * (MAX_QUERY_CHARS // 2))) <= 2


def test_retrieval_known_filter_keys_still_filter() -> None:
    """The key check does not change what a correct filter keeps."""
    retriever = Retriever(_ret_doc(), "line", filters={"file_name": ["b.txt"]})
    assert [n.metadata["file_name"] for n in retriever("普洱 长城")] == ["b.txt"]

# ==================================================================== area: fusion

_NODES = [DocNode(text, uid=text) for text in ("长城东起山海关。", "故宫在北京。", "普洱是黑茶。")]
_TOPK_RULE = r"topk must be an integer in \[1, 10000\], got "


def _overlap(query: str, texts: list[str]) -> list[float]:
    return [float(len(set(query) & set(text))) for text in texts]


def _path(query: str) -> list[DocNode]:
    return list(_NODES)


def _no_questions() -> KnowledgeBase:
    return KnowledgeBase(files={"a.txt": "长城很长。"}, questions=[], paragraphs=["长城很长。"],
                         skipped=[], fixed_offsets=[])


def _rag(**kwargs: Any) -> MultiPathRAG:
    return MultiPathRAG({"all": _path}, **{"llm": OfflineLLM(), **kwargs})


_PATH_MUST = r"a path must return a list of DocNodes \(\[\] when it finds nothing\)"
_SWEEP_ROW = {"cut_off": 0.5, "recall@3": 0.9, "context_relevance@3": 0.5, "mean_kept": 2.0}

FUSION_CASES: list[Case] = [
    # -- Reranker: its arguments, checked when it is built
    Case("fusion", "reranker-nan-cut-off",
         lambda tmp: Reranker(model=_overlap, score_cut_off=float("nan")),
         ValueError, r"score_cut_off must be a number, got nan \(NaN compares false"),
    Case("fusion", "reranker-topk-zero", lambda tmp: Reranker(model=_overlap, topk=0),
         ValueError, _TOPK_RULE + "0"),
    Case("fusion", "reranker-topk-bool", lambda tmp: Reranker(model=_overlap, topk=True),
         ValueError, _TOPK_RULE + "True"),
    Case("fusion", "reranker-topk-float", lambda tmp: Reranker(model=_overlap, topk=2.5),
         ValueError, _TOPK_RULE + "2.5"),
    Case("fusion", "reranker-unknown-name", lambda tmp: Reranker("Cohere"),
         ValueError, r"unknown reranker 'Cohere'; choose 'ModuleReranker', 'KeywordFilter'"),
    Case("fusion", "reranker-bad-output-format",
         lambda tmp: Reranker(model=_overlap, output_format="json"),
         ValueError, r"output_format must be one of \(None, 'content', 'dict'\), got 'json'"),
    Case("fusion", "reranker-join-without-content",
         lambda tmp: Reranker(model=_overlap, join="\n"),
         ValueError, r"join needs output_format='content'"),
    Case("fusion", "reranker-join-not-a-string",
         lambda tmp: Reranker(model=_overlap, output_format="content", join=1),
         ValueError, r"join must be True, False or a separator string, got 1"),
    Case("fusion", "reranker-model-of-a-wrong-type", lambda tmp: Reranker(model=42),
         TypeError, r"model must be a model name or folder, a callable .* or None, got int"),
    Case("fusion", "reranker-feature-weight-nan",
         lambda tmp: Reranker(embedder=None, weights={"dense": float("nan")}),
         ValueError, r"weights\['dense'\] must be a finite number, got nan"),
    Case("fusion", "reranker-unknown-feature",
         lambda tmp: FeatureReranker(embedder=None, weights={"magic": 1.0}),
         ValueError, r"unknown feature\(s\) \['magic'\]; features are \('bm25_words'"),
    Case("fusion", "reranker-cache-too-small",
         lambda tmp: FeatureReranker(embedder=None, cache_chars=10),
         ValueError, r"cache_chars must be an integer >= 10000, got 10"),
    # -- Reranker: what it is called with, and what its model hands back
    Case("fusion", "reranker-nodes-none", lambda tmp: Reranker(model=_overlap)("长城", None),
         TypeError, r"nodes must be a list of DocNodes \(what a retriever returns\), got NoneType"),
    Case("fusion", "reranker-nodes-holding-a-string",
         lambda tmp: Reranker(model=_overlap)("长城", [_NODES[0], "故宫"]),
         TypeError, r"nodes must be a list of DocNodes, got a str in it: '故宫'"),
    Case("fusion", "reranker-empty-query", lambda tmp: Reranker(model=_overlap)(" ", _NODES),
         ValueError, r"query is empty: give the question"),
    Case("fusion", "reranker-model-returns-too-few-scores",
         lambda tmp: Reranker(model=lambda q, texts: [1.0])("长城", _NODES),
         ValueError, r"reranker model '<lambda>' must return one score per candidate: "
                     r"got 1 scores for 3"),
    Case("fusion", "reranker-model-returns-nan",
         lambda tmp: Reranker(model=lambda q, texts: [1.0, float("nan"), 0.0])("长城", _NODES),
         ValueError, r"must return a number per candidate: got NaN for candidates \[1\]"),
    # -- KeywordFilter
    Case("fusion", "keyword-filter-keys-a-string",
         lambda tmp: Reranker("KeywordFilter", required_keys="长城"),
         TypeError, r"required_keys must be a list of keys, got the string '长城'"),
    Case("fusion", "keyword-filter-key-not-a-string",
         lambda tmp: KeywordFilter(required_keys=["长城", 1]),
         TypeError, r"required_keys must hold strings, got int 1"),
    Case("fusion", "keyword-filter-empty-exclude-key",
         lambda tmp: KeywordFilter(exclude_keys=[""]),
         ValueError, r"exclude_keys must hold non-empty strings, got ''"),
    Case("fusion", "keyword-filter-unknown-mode", lambda tmp: KeywordFilter(["长城"], mode="some"),
         ValueError, r"mode must be 'all' or 'any', got 'some'"),
    # -- MultiRetriever
    Case("fusion", "multi-retriever-topk-minus-one",
         lambda tmp: MultiRetriever({"all": _path}, topk=-1), ValueError, _TOPK_RULE + "-1"),
    Case("fusion", "multi-retriever-topk-zero",
         lambda tmp: MultiRetriever({"all": _path}, topk=0), ValueError, _TOPK_RULE + "0"),
    Case("fusion", "multi-retriever-topk-bool",
         lambda tmp: MultiRetriever({"all": _path}, topk=True), ValueError, _TOPK_RULE + "True"),
    Case("fusion", "multi-retriever-path-returns-none",
         lambda tmp: MultiRetriever({"all": _path, "qa": lambda q: None})("长城"),
         TypeError, r"retrieval path 'qa' \(#2, <function .*\) returned None; " + _PATH_MUST),
    Case("fusion", "multi-retriever-path-returns-a-string",
         lambda tmp: MultiRetriever({"text": lambda q: "长城"}, max_workers=2)("长城"),
         TypeError, r"retrieval path 'text' \(#1, .*\) returned '长城' \(str\); " + _PATH_MUST),
    Case("fusion", "multi-retriever-path-returns-ints",
         lambda tmp: MultiRetriever({"ids": lambda q: [123]})("长城"),
         TypeError, r"retrieval path 'ids' .* item \[0\] is 123 \(int\), not a DocNode; "
                    + _PATH_MUST),
    Case("fusion", "multi-retriever-path-not-callable",
         lambda tmp: MultiRetriever({"bm25": "bm25_chinese"}),
         TypeError, r"retrieval path 'bm25' \(#1\) must be callable query -> list of DocNodes, "
                    r"got str"),
    Case("fusion", "multi-retriever-paths-a-list", lambda tmp: MultiRetriever([_path]),
         TypeError, r"paths must be a dict name -> retriever, .* got list"),
    Case("fusion", "multi-retriever-no-paths", lambda tmp: MultiRetriever({}),
         ValueError, r"paths is empty: give at least one retriever"),
    Case("fusion", "multi-retriever-unknown-fusion",
         lambda tmp: MultiRetriever({"all": _path}, fusion="max"),
         ValueError, r"fusion must be 'union' or 'rrf', got 'max'"),
    Case("fusion", "multi-retriever-negative-workers",
         lambda tmp: MultiRetriever({"all": _path}, max_workers=-1),
         ValueError, r"max_workers must be an integer >= 0, got -1"),
    # -- reciprocal rank fusion and union
    Case("fusion", "rrf-negative-k", lambda tmp: reciprocal_rank_fusion([_NODES], k=-1),
         ValueError, r"k must be a number >= 0, got -1"),
    Case("fusion", "rrf-nan-k", lambda tmp: reciprocal_rank_fusion([_NODES], k=float("nan")),
         ValueError, r"k must be a number >= 0, got nan"),
    Case("fusion", "rrf-topk-zero", lambda tmp: reciprocal_rank_fusion([_NODES], topk=0),
         ValueError, _TOPK_RULE + "0"),
    Case("fusion", "rrf-topk-minus-one", lambda tmp: reciprocal_rank_fusion([_NODES], topk=-1),
         ValueError, _TOPK_RULE + "-1"),
    Case("fusion", "rrf-ranking-none", lambda tmp: reciprocal_rank_fusion([_NODES, None]),
         TypeError, r"rankings\[1\] must be a list of DocNodes, got NoneType"),
    Case("fusion", "union-ranking-of-strings", lambda tmp: union([["长城"]]),
         TypeError, r"rankings\[0\]\[0\] must be a DocNode, got str"),
    # -- widgets
    Case("fusion", "query-explorer-without-questions",
         lambda tmp: query_explorer(_no_questions()),
         ValueError, r"query_explorer needs a knowledge base with questions \(kb.questions is "
                     r"empty\): load one with questions .* or call explore\(kb, "),
    Case("fusion", "explore-topk-zero",
         lambda tmp: explore(_no_questions(), "长城", topk=0), ValueError, _TOPK_RULE + "0"),
    Case("fusion", "explore-nan-cut-off",
         lambda tmp: explore(_no_questions(), "长城", cut_off=float("nan")),
         ValueError, r"cut_off must be a number, got nan"),
    Case("fusion", "threshold-slider-no-rows", lambda tmp: threshold_slider([]),
         ValueError, r"sweep_rows must be a non-empty list of rows"),
    Case("fusion", "threshold-slider-wrong-k", lambda tmp: threshold_slider([_SWEEP_ROW], k=5),
         ValueError, r"sweep_rows lack \['recall@5', 'context_relevance@5'\] for k=5: pass the k "
                     r"the sweep was run with"),
    # -- MultiPathRAG
    Case("fusion", "rag-context-size-zero", lambda tmp: _rag(context_size=0),
         ValueError, r"context_size must be an integer >= 1, got 0"),
    Case("fusion", "rag-unknown-rewrite", lambda tmp: _rag(rewrite="hyde"),
         ValueError, r"rewrite must be None, 'expand' or 'multi', got 'hyde'"),
    Case("fusion", "rag-reranker-a-string", lambda tmp: _rag(reranker="bge-reranker"),
         TypeError, r"reranker must be None or a Reranker .*got str"),
    Case("fusion", "rag-reranker-returns-texts",
         lambda tmp: _rag(reranker=Reranker(model=_overlap, output_format="content")),
         ValueError, r"reranker must hand back nodes: build it with output_format=None"),
    Case("fusion", "rag-llm-a-string", lambda tmp: _rag(llm="gpt-4o"),
         TypeError, r"llm must be None \(the configured one\) or a chat LLM .*got str"),
    Case("fusion", "rag-qa-path-returns-none",
         lambda tmp: _rag(qa_path=lambda q: None).ask("长城东起哪里？"),
         TypeError, r"retrieval path 'qa pairs' \(.*\) returned None; " + _PATH_MUST),
    Case("fusion", "rag-negative-workers", lambda tmp: _rag(max_workers=-2),
         ValueError, r"max_workers must be an integer >= 0, got -2"),
    Case("fusion", "rag-question-not-a-string", lambda tmp: _rag().ask(["长城", "故宫"]),
         TypeError, r"query must be a string, got list"),
]

# ==================================================================== area: datasets


def _squad_call(content: object, name: str = "s.json") -> Callable[[Path], Any]:
    """A call that writes ``content`` (bytes or text as given, anything else as JSON) to
    ``tmp_path/name`` and reads it with ``load_squad``."""

    def call(tmp_path: Path) -> Any:
        import json
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            text = content if isinstance(content, str) else json.dumps(content)
            path.write_text(text, encoding="utf-8")
        return load_squad(path)

    return call


def _squad(context: object = "甲乙丙丁。", question: object = "乙？", start: object = 1,
           **paragraph: object) -> dict[str, Any]:
    """A one-question SQuAD object; any argument can be made wrong."""
    qa = {"id": "q1", "question": question, "answers": [{"text": "乙", "answer_start": start}]}
    return {"data": [{"title": "t", "paragraphs": [{"context": context, "qas": [qa],
                                                    **paragraph}]}]}


def _without(key: str) -> dict[str, Any]:
    data = _squad()
    del data["data"][0]["paragraphs"][0][key]
    return data


def _repeated_paragraph_ids() -> dict[str, Any]:
    data = _squad(id="p")
    data["data"].append(_squad(id="p")["data"][0])
    return data


def _load_missing(tmp_path: Path) -> Any:
    return load_squad(tmp_path / "none.json")


def _load_a_folder(tmp_path: Path) -> Any:
    (tmp_path / "folder.json").mkdir()
    return load_squad(tmp_path / "folder.json")


_P0 = r"s\.json: data\[0\]\.paragraphs\[0\]"
_ANSWER = _P0 + r"\.qas\[0\]\.answers\[0\]"
_BAD = DatasetFormatError
def _evaluate_empty_squad(tmp_path: Path) -> Any:
    from course_lib.lab.datasets import build_knowledge_base
    from course_lib.lab.evaluation import evaluate

    return evaluate(build_knowledge_base(_squad_call({"data": []})(tmp_path)), "bm25-paragraph")


DATASET_CASES: list[Case] = [
    Case("datasets", "evaluate-on-a-squad-file-with-no-data", _evaluate_empty_squad, ValueError,
         r"kb: the knowledge base holds 0 paragraphs and 0 questions: nothing to evaluate "
         r"\(a SQuAD file whose \"data\" is empty"),
    Case("datasets", "paragraph-without-context", _squad_call(_without("context")), _BAD,
         _P0 + r" lacks the field 'context'; expected a paragraph: \{\"context\""),
    Case("datasets", "paragraph-without-qas", _squad_call(_without("qas")), _BAD,
         _P0 + r" lacks the field 'qas'; expected a paragraph: \{\"context\""),
    Case("datasets", "paragraph-not-an-object",
         _squad_call({"data": [{"paragraphs": ["甲乙丙丁。"]}]}), _BAD,
         _P0 + r" must be a paragraph: \{\"context\".*; got a string"),
    Case("datasets", "numeric-question", _squad_call(_squad(question=5)), _BAD,
         _P0 + r"\.qas\[0\]\.question must be a string, got 5; expected a question"),
    Case("datasets", "context-not-a-string", _squad_call(_squad(context=["甲"])), _BAD,
         _P0 + r"\.context must be a string, got \['甲'\]; expected a paragraph"),
    Case("datasets", "data-is-an-object", _squad_call({"data": {"title": "t"}}), _BAD,
         r"s\.json: data must be a list, got an object; expected a JSON object \{\"data\""),
    Case("datasets", "no-data-field", _squad_call({"version": "1"}), _BAD,
         r"s\.json: the top level lacks the field 'data'; expected a JSON object \{\"data\""),
    Case("datasets", "answer-start-abc", _squad_call(_squad(start="abc")), _BAD,
         _ANSWER + r"\.answer_start must be an integer, got 'abc'; expected an answer"),
    Case("datasets", "answer-start-true", _squad_call(_squad(start=True)), _BAD,
         _ANSWER + r"\.answer_start must be an integer, got True; expected an answer"),
    Case("datasets", "answer-start-negative", _squad_call(_squad(start=-2)), _BAD,
         _ANSWER + r"\.answer_start must be an integer ≥ 0 .*or -1 \(not located\), got -2"),
    Case("datasets", "escaped-lone-surrogate-in-context",
         _squad_call('{"data": [{"paragraphs": [{"context": "甲\\ud800", "qas": []}]}]}'), _BAD,
         _P0 + r"\.context holds a lone surrogate '\\ud800' at character 1: .*valid Unicode"),
    Case("datasets", "escaped-lone-surrogate-in-question",
         _squad_call(_squad(question="乙\ud800？")), _BAD,
         _P0 + r"\.qas\[0\]\.question holds a lone surrogate '\\ud800'.*valid Unicode"),
    Case("datasets", "top-level-list", _squad_call([_squad()]), _BAD,
         r"s\.json: the top level must be a JSON object \{\"data\".*; got a list"),
    Case("datasets", "invalid-json", _squad_call('{"data": ['), _BAD,
         r"s\.json is not valid JSON \(.* at line 1 column 11\); expected a JSON object"),
    Case("datasets", "empty-file", _squad_call(" \n"), _BAD,
         r"s\.json is empty; expected a JSON object \{\"data\""),
    Case("datasets", "not-utf8", _squad_call('{"data": ["长城"]}'.encode("gbk")), _BAD,
         r"s\.json is not UTF-8 text \(byte 0xb3 at offset 11\): save it as UTF-8"),
    Case("datasets", "repeated-paragraph-ids", _squad_call(_repeated_paragraph_ids()), _BAD,
         r"s\.json: data\[1\]\.paragraphs\[0\]\.id 'p' repeats data\[0\]\.paragraphs\[0\]\.id: "
         r"paragraph ids must be unique"),
    Case("datasets", "missing-file", _load_missing, FileNotFoundError,
         r"cannot read the SQuAD file \(No such file or directory\); give the path of a "
         r"SQuAD-format JSON file: '.*none\.json'"),
    Case("datasets", "a-folder", _load_a_folder, IsADirectoryError,
         r"cannot read the SQuAD file \(Is a directory\); give the path of a SQuAD-format "
         r"JSON file: '.*folder\.json'"),
]

# ==================================================================== area: cli
# The command line answers a bad argument with exit status 2 and one argparse-style line
# on stderr (``python -m course_lib evaluate: error: argument --json: ...``) before any
# work starts, and leaves no file behind: a parametrised test rather than Cases, since
# main() returns a status instead of raising. Each row counts toward the matrix.


CLI_CASES: list[Case] = []

_EVALUATE = ["evaluate", "--squad", "{d}/ok.json", "--pipeline", "bm25-paragraph"]
_COMPARE = ["compare", "--squad", "{d}/ok.json"]
_TWO = ["bm25-paragraph", "bm25-char-paragraph"]
_CLI_ARGUMENT_CASES = [
    ("json-into-missing-folder", [*_EVALUATE, "--json", "{d}/missing/r.json"],
     r"argument --json: the folder .*/missing does not exist; create it first"),
    ("json-names-a-folder", [*_EVALUATE, "--json", "{d}/out"],
     r"argument --json: .*/out is a folder; give a file name, e\.g\. --json .*/out/result\.json"),
    ("json-folder-is-a-file", [*_EVALUATE, "--json", "{d}/plain.txt/r.json"],
     r"argument --json: the folder .*/plain\.txt is not a folder; create it first"),
    ("json-empty-name", [*_EVALUATE, "--json", ""],
     r"argument --json: give a file name, e\.g\. --json result\.json"),
    ("json-names-a-fifo", [*_EVALUATE, "--json", "{d}/pipe"],
     r"argument --json: .*/pipe exists and is not a regular file; give the name of a new"),
    ("squad-missing", ["evaluate", "--squad", "{d}/none.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/none\.json: cannot read the SQuAD file \(No such file or "
     r"directory\); give the path of a SQuAD-format JSON file"),
    ("squad-malformed", ["evaluate", "--squad", "{d}/bad.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/bad\.json: data\[0\]\.paragraphs\[0\] lacks the field 'context'; "
     r"expected a paragraph"),
    ("squad-invalid-json",
     ["evaluate", "--squad", "{d}/broken.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/broken\.json is not valid JSON \(.*line 1 column 11\); expected"),
    ("squad-without-questions",
     ["evaluate", "--squad", "{d}/empty.json", "--pipeline", "bm25-paragraph"],
     r"argument --squad: .*/empty\.json has no \(non-empty\) questions to evaluate; give a "
     r"SQuAD file with questions"),
    ("docs-per-file-zero", [*_EVALUATE, "--docs-per-file", "0"],
     r"argument --docs-per-file: must be a whole number ≥ 1, got 0"),
    ("docs-per-file-text", [*_EVALUATE, "--docs-per-file", "ten"],
     r"argument --docs-per-file: must be a whole number ≥ 1, got 'ten'"),
    ("pipeline-misspelt", ["evaluate", "--squad", "{d}/ok.json", "--pipeline", "bm25-paragrap"],
     r"argument --pipeline: unknown pipeline 'bm25-paragrap'; did you mean bm25-paragraph"),
    ("pipeline-unknown", ["evaluate", "--squad", "{d}/ok.json", "--pipeline", "xyz"],
     r"argument --pipeline: unknown pipeline 'xyz'; choose one of .*bm25-paragraph"),
    ("reproduce-json-names-a-folder", ["reproduce", "--json", "{d}/out"],
     r"argument --json: .*/out is a folder; give a file name"),
    ("reproduce-squad-malformed", ["reproduce", "--squad", "{d}/bad.json"],
     r"argument --squad: .*/bad\.json: data\[0\]\.paragraphs\[0\] lacks the field 'context'"),
    # evaluate's TREC outputs: checked like --json, and never two outputs into one file
    ("run-into-missing-folder", [*_EVALUATE, "--run", "{d}/missing/run.txt"],
     r"argument --run: the folder .*/missing does not exist; create it first"),
    ("qrels-names-a-folder", [*_EVALUATE, "--qrels", "{d}/out"],
     r"argument --qrels: .*/out is a folder; give a file name, e\.g\. --qrels .*/out/qrels\.txt"),
    ("run-empty-name", [*_EVALUATE, "--run", " "],
     r"argument --run: give a file name, e\.g\. --run run\.txt"),
    ("qrels-is-the-run-file", [*_EVALUATE, "--run", "{d}/x.txt", "--qrels", "{d}/./x.txt"],
     r"argument --qrels: .*/x\.txt is also the --run file; give each output its own file"),
    ("run-is-the-json-file", [*_EVALUATE, "--json", "{d}/r.json", "--run", "{d}/r.json"],
     r"argument --run: .*/r\.json is also the --json file"),
    # compare: two or more known pipelines, each named once; a baseline among them
    ("compare-pipeline-misspelt", [*_COMPARE, "bm25-paragraph", "bm25-char-paragrap"],
     r"argument PIPELINE: unknown pipeline 'bm25-char-paragrap'; did you mean "
     r"bm25-char-paragraph or .*\? \(`python -m course_lib pipelines` lists them all\)"),
    ("compare-pipeline-unknown", [*_COMPARE, "xyz", "bm25-paragraph"],
     r"argument PIPELINE: unknown pipeline 'xyz'; choose one of .*bm25-paragraph"),
    ("compare-one-pipeline", [*_COMPARE, "bm25-paragraph"],
     r"argument PIPELINE: compare needs at least two pipelines, got only 'bm25-paragraph'; "
     r"name another"),
    ("compare-duplicate-pipeline",
     [*_COMPARE, "bm25-paragraph", "bm25-char-paragraph", "bm25-paragraph"],
     r"argument PIPELINE: 'bm25-paragraph' is named twice; name each pipeline once"),
    ("compare-same-pipeline-twice", [*_COMPARE, "bm25-paragraph", "bm25-paragraph"],
     r"argument PIPELINE: 'bm25-paragraph' is named twice"),
    ("compare-no-pipeline", _COMPARE,
     r"the following arguments are required: PIPELINE"),
    ("compare-baseline-misspelt", [*_COMPARE, *_TWO, "--baseline", "bm25-paragrap"],
     r"argument --baseline: unknown pipeline 'bm25-paragrap'; did you mean bm25-paragraph"),
    ("compare-baseline-not-compared", [*_COMPARE, *_TWO, "--baseline", "bm25-coarse"],
     r"argument --baseline: 'bm25-coarse' is not among the pipelines compared "
     r"\(bm25-paragraph, bm25-char-paragraph\); name it among them too"),
    ("compare-json-into-missing-folder", [*_COMPARE, *_TWO, "--json", "{d}/missing/c.json"],
     r"argument --json: the folder .*/missing does not exist; create it first"),
    ("compare-squad-missing", ["compare", "--squad", "{d}/none.json", *_TWO],
     r"argument --squad: .*/none\.json: cannot read the SQuAD file \(No such file"),
    ("compare-docs-per-file-zero", [*_COMPARE, *_TWO, "--docs-per-file", "0"],
     r"argument --docs-per-file: must be a whole number ≥ 1, got 0"),
]
_CLI_PARAMS = [pytest.param(*case, id=case[0]) for case in _CLI_ARGUMENT_CASES] + [
    pytest.param("json-folder-not-writable", [*_EVALUATE, "--json", "{d}/locked/r.json"],
                 r"argument --json: cannot write into the folder .*/locked \(Permission "
                 r"denied\); choose a folder you can write to", id="json-folder-not-writable",
                 marks=pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")),
]


def _cli_files(tmp_path: Path) -> None:
    """The files the command-line cases name, in ``tmp_path``."""
    import json
    qa = {"id": "q1", "question": "乙？", "answers": [{"text": "乙", "answer_start": 1}]}
    good = {"data": [{"paragraphs": [{"context": "甲乙丙丁。", "qas": [qa]}]}]}
    (tmp_path / "ok.json").write_text(json.dumps(good), encoding="utf-8")
    (tmp_path / "bad.json").write_text('{"data": [{"paragraphs": [{"qas": []}]}]}')
    (tmp_path / "broken.json").write_text('{"data": [')
    (tmp_path / "empty.json").write_text('{"data": []}')
    (tmp_path / "plain.txt").write_text("not a folder")
    (tmp_path / "out").mkdir()
    (tmp_path / "locked").mkdir(mode=0o555)
    os.mkfifo(tmp_path / "pipe")


def _cli_no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any start of the real work fail the test loudly (arguments come first)."""

    def reached(*args: object, **kwargs: object) -> None:
        raise AssertionError("work started before the arguments were checked")

    for name in ("course_lib.lab.cli.build_knowledge_base", "course_lib.lab.cli.fetch_cmrc2018",
                 "course_lib.lab.evaluation.evaluate", "course_lib.lab.reproduce.reproduce"):
        monkeypatch.setattr(name, reached)


@pytest.mark.parametrize(("name", "argv", "match"), _CLI_PARAMS)
def test_cli_bad_argument_exits_2_before_any_work(name: str, argv: list[str], match: str,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _cli_files(tmp_path)
    _cli_no_work(monkeypatch)
    before = sorted(tmp_path.rglob("*"))
    try:
        code = cli_main([arg.format(d=tmp_path) for arg in argv])
    except SystemExit as exit_:  # tolerated: argparse's own way to say the same
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, f"{name}: exit status {code}"
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and err.splitlines()[-1] == errors[0], err  # one line, last
    assert errors[0].startswith(f"python -m course_lib {argv[0]}: error: "), errors[0]
    assert re.search(match, errors[0]), f"{name}: {errors[0]!r} !~ {match!r}"
    assert "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before, "a file was left behind"

# ==================================================================== area: stores
def _corpus_with_notes(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.txt").write_text("我的笔记", encoding="utf-8")
    return corpus


def _save_into_corpus(tmp_path: Path) -> None:
    from course_lib.store.persist import save

    corpus = _corpus_with_notes(tmp_path)
    try:
        save(Document(texts={"a": "甲。"}), corpus)
    finally:  # refused, and nothing of the learner's lost
        assert sorted(p.name for p in corpus.iterdir()) == ["notes.txt"]


def _load_or_build_over_corpus(tmp_path: Path) -> None:
    from course_lib.store.persist import load_or_build

    corpus, reports, built = _corpus_with_notes(tmp_path), [], []
    try:
        load_or_build(corpus, lambda: built.append(1) or Document(texts={"a": "甲。"}),
                      report=reports.append)
    finally:  # refused before building or announcing a rebuild
        assert built == [] and reports == []
        assert sorted(p.name for p in corpus.iterdir()) == ["notes.txt"]


def _persist(name: str) -> Any:
    from course_lib.store import persist

    return getattr(persist, name)


def _milvus(**kwargs: Any) -> Any:
    from course_lib.store.milvus_store import MilvusStore

    return MilvusStore(**kwargs)


def _milvus_error() -> type[BaseException]:
    from course_lib.store.milvus_store import MilvusStoreError

    return MilvusStoreError


def _plain_file(tmp_path: Path) -> Path:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    return tmp_path / "file"


STORE_CASES: list[Case] = [
    Case("stores", "save-into-a-corpus-folder", _save_into_corpus, ValueError,
         r"corpus' is not a saved knowledge base, so it is left untouched.*notes\.txt"
         r".*Save into a new folder"),
    Case("stores", "load-or-build-over-a-corpus-folder", _load_or_build_over_corpus, ValueError,
         r"is not a saved knowledge base.*Save into a new folder"),
    Case("stores", "save-into-the-working-folder",
         lambda tmp: _persist("save")(Document(texts={"a": "甲。"}), "."), ValueError,
         r"directory '\.' is the folder Python runs in.*save\(doc, 'kb'\)"),
    Case("stores", "save-over-a-plain-file",
         lambda tmp: _persist("save")(Document(texts={"a": "甲。"}), _plain_file(tmp)),
         ValueError, r"file' is not a saved knowledge base.*it is not a folder"),
    Case("stores", "save-not-a-document",
         lambda tmp: _persist("save")("a document", tmp / "kb"), TypeError,
         r"doc must be a Document, got str"),
    Case("stores", "build-returns-not-a-document",
         lambda tmp: _persist("load_or_build")(tmp / "kb", lambda: "a document",
                                               report=lambda _: None),
         TypeError, r"build\(\) must return a Document, got str"),
    Case("stores", "load-a-folder-without-a-knowledge-base",
         lambda tmp: _persist("load")(_corpus_with_notes(tmp)), RuntimeError,
         r"corpus holds no saved knowledge base \(no manifest\.json\)"),
    Case("stores", "load-a-number", lambda tmp: _persist("load")(42), TypeError,
         r"directory must be a str or Path, got int"),
    Case("stores", "save-timeout-negative",
         lambda tmp: _persist("save")(Document(texts={"a": "甲。"}), tmp / "kb", timeout=-1),
         ValueError, r"timeout must be a number >= 0, got -1"),
    Case("stores", "milvus-metric-unknown", lambda tmp: _milvus(metric="L2"), ValueError,
         r"metric must be 'COSINE' or 'IP', got 'L2'"),
    Case("stores", "milvus-folder-missing",
         lambda tmp: _milvus(uri=str(tmp / "missing" / "m.db")), _milvus_error(),
         r"cannot open the Milvus Lite database .*m\.db: the folder .*missing does not exist"),
    Case("stores", "milvus-folder-is-a-file",
         lambda tmp: _milvus(uri=str(_plain_file(tmp) / "m.db")), _milvus_error(),
         r"cannot open the Milvus Lite database .*: .*file is a file, not a folder"),
]

# ==================================================================== the matrix
CASES = (LLM_CASES + REMOTE_CASES + READER_CASES + RETRIEVAL_CASES + FUSION_CASES + DATASET_CASES
         + CLI_CASES + STORE_CASES)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.area}-{c.name}" for c in CASES])
def test_bad_input_gets_a_clear_error(case: Case, tmp_path: Path) -> None:
    with pytest.raises(case.error) as raised:
        case.call(tmp_path)
    message = str(raised.value)
    assert message.strip(), f"{case.name}: empty message"
    assert re.search(case.match, message), f"{case.name}: {message!r} !~ {case.match!r}"


def test_case_names_are_unique() -> None:
    names = [f"{c.area}-{c.name}" for c in CASES]
    assert len(names) == len(set(names))
