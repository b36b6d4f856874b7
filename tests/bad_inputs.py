"""The shared parts of the bad-input cases, which live in the test file of the module whose
input each one checks (tests/test_llm.py, tests/test_readers.py, ...).

A case names what it calls, the exception it must raise and a regular expression its
message must match — the argument or file it names and what is allowed. A case whose fault
could also leave something behind (a half-written file, a hang) checks that inside its
``call``. Each test file binds ``test_bad_input_gets_a_clear_error = clear_error_test(CASES)``.
"""

import functools
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai_standin import StandIn

from course_lib import DocNode, Document
from course_lib.embeddings import Embedder, HTTPEmbedder, OpenAIEmbedder
from course_lib.lab.data.datasets import load_squad
from course_lib.rerank import RerankEndpoint


@dataclass(frozen=True)
class Case:
    """``call(tmp_path)`` must raise ``error`` with a message matching ``match``."""

    area: str
    name: str
    call: Callable[[Path], Any]
    error: type[BaseException] | tuple[type[BaseException], ...]
    match: str


def clear_error_test(cases: list[Case]) -> Callable[[Case, Path], None]:
    """The test that each of ``cases`` raises its error with a matching message; its ids are
    ``area-name``, which must be unique (checked here, so a repeat fails the collection)."""
    names = [f"{c.area}-{c.name}" for c in cases]
    repeated = sorted({name for name in names if names.count(name) > 1})
    assert not repeated, f"case names repeat: {repeated}"

    @pytest.mark.parametrize("case", cases, ids=names)
    def test_bad_input_gets_a_clear_error(case: Case, tmp_path: Path) -> None:
        with pytest.raises(case.error) as raised:
            case.call(tmp_path)
        message = str(raised.value)
        assert message.strip(), f"{case.name}: empty message"
        assert re.search(case.match, message), f"{case.name}: {message!r} !~ {case.match!r}"

    return test_bad_input_gets_a_clear_error


# -------------------------------------------------------------------- remote endpoints
NOWHERE = "http://127.0.0.1:9/v1"  # valid, and nothing listens: these cases send nothing
HANG_MARGIN = 1.5  # seconds past the deadline a hang case may take before it counts as a hang


@functools.cache
def llm_server(behaviour: str) -> StandIn:
    """One stand-in per behaviour for the run: ``silent`` answers only after 5 s, ``drip``
    sends its answer a byte per 0.1 s. Never rescripted, so a late answer harms nothing."""
    server = StandIn()
    server.delay, server.drip = (5.0, 0.0) if behaviour == "silent" else (0.0, 0.1)
    return server


SECONDS = r" must be a number of seconds in \(0, 3600\], got "



# The embedding and rerank endpoints keep the same rules as the chat client: one name
# (retries=), one check of timeout= and deadline=, and a call cut off at its deadline.
class _Texts(HTTPEmbedder):
    def request_body(self, texts: list[str], is_query: bool) -> dict[str, Any]:
        return {"texts": texts}

    def parse_vectors(self, reply: Any) -> Any:
        return [item["embedding"] for item in reply["embeddings"]]


REMOTE = {  # each client: its call of ["x"], given the server's base URL and options
    "openai-embedder": lambda base, **o: OpenAIEmbedder("m", base_url=base, **o)(["x"]),
    "http-embedder": lambda base, **o: _Texts(base + "/custom/embed", **o)(["x"]),
    "rerank-endpoint": lambda base, **o: RerankEndpoint("m", base_url=base, **o)("q", ["x"]),
}


def remote(client: str, behaviour: str | None = None, bound: float = 0.0,
            **options: Any) -> Callable[[Path], Any]:
    """``client``'s call on the ``behaviour`` server (or on nothing); on a server, it must
    fail within ``bound`` seconds."""
    def call(tmp_path: Path) -> None:
        base = llm_server(behaviour).url if behaviour else NOWHERE
        start = time.monotonic()
        try:
            REMOTE[client](base, **options)
        finally:
            elapsed = time.monotonic() - start
            assert not behaviour or elapsed < bound + HANG_MARGIN, f"{elapsed:.1f} s"
    return call


REMOTE_NUMBERS = [  # (name, argument, value, match): each remote client refuses these
    ("timeout-zero", "timeout", 0, "timeout" + SECONDS + "0"),
    ("deadline-string", "deadline", "5", "deadline" + SECONDS + "'5'"),
    ("deadline-nan", "deadline", float("nan"), "deadline" + SECONDS + "nan"),
    ("retries-bool", "retries", True, r"retries must be an integer in \[0, 10\], got True")]


# ---------------------------------------------------------------- retrieval and fusion
class Utf8Embedder(Embedder):
    """A stand-in dense embedder that, like every real one (e5, USE, an endpoint), needs
    the text's UTF-8 bytes: a lone surrogate would fail in ``encode``, not in a check."""

    name, dim = "utf8-stand-in", 8

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.array([np.bincount(np.frombuffer(t.encode("utf-8"), np.uint8) % 8,
                                       minlength=8) + 1.0 for t in texts])


def ret_doc(embed: bool = False, built: bool = False) -> Document:
    """Two files cut into lines, and a group whose transform keeps nothing."""
    doc = Document(texts={"a.txt": "长城东起山海关。\n故宫在北京。", "b.txt": "普洱是黑茶。"},
                   embed=Utf8Embedder() if embed else None)
    doc.create_node_group("line", transform=lambda text: text.split("\n"))
    doc.create_node_group("nothing", transform=lambda text: [])
    if built:
        doc.get_nodes("line"), doc.get_nodes("nothing")
    return doc


EMPTY_GROUP = (r"node group 'nothing' has no nodes, so there is nothing to retrieve from: its "
                r"transform returned nothing .* check the transform")
TOPK = r"topk must be an integer in \[1, 10000\], got "


NODES = [DocNode(text, uid=text) for text in ("长城东起山海关。", "故宫在北京。", "普洱是黑茶。")]


def char_overlap(query: str, texts: list[str]) -> list[float]:
    return [float(len(set(query) & set(text))) for text in texts]


def all_nodes(query: str) -> list[DocNode]:
    return list(NODES)


PATH_MUST = r"a path must return a list of DocNodes \(\[\] when it finds nothing\)"


# ------------------------------------------------------------------- files
def squad_call(content: object, name: str = "s.json") -> Callable[[Path], Any]:
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


def plain_file(tmp_path: Path) -> Path:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    return tmp_path / "file"


def safe_fifo(path: Path) -> Path:
    """A FIFO at ``path`` (a POSIX system's, else the test is skipped). Should anything ever
    open it blocking, a thread opens its write end after 5 s, so that the test fails instead
    of hanging."""
    if os.name != "posix" or not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs need a POSIX system")
    os.mkfifo(path)

    def unblock() -> None:
        threading.Event().wait(5)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # nobody is blocked on it (ENXIO), or it is gone

    threading.Thread(target=unblock, daemon=True).start()
    return path
