"""One family of errors and one retry policy for every remote client, on real local HTTP."""

import ast
import inspect
import re
import time
from pathlib import Path

import pytest
from openai_standin import StandIn

import course_lib
from course_lib._support import http_json, transports
from course_lib._support.http_json import (
    MalformedReply,
    RemoteConnectionError,
    RemoteError,
    RemoteHTTPError,
    RemoteTimeout,
)
from course_lib.embeddings import EmbeddingEndpointError, HTTPEmbedder, OpenAIEmbedder
from course_lib.llm import LLMError, OpenAIChat
from course_lib.rerank import RerankEndpoint

NOWHERE = "http://127.0.0.1:9"  # nothing listens on the discard port


class Custom(HTTPEmbedder):
    def request_body(self, texts, is_query):
        return {"texts": texts}

    def parse_vectors(self, reply):
        return [item["embedding"] for item in reply["embeddings"]]


# Each client: (name, build(base, pauses, timeout, **options) -> a call with no arguments,
# the endpoint its errors name for a given base URL). One retry unless options say otherwise.
def _options(pauses, timeout, options):
    return {"retries": 1, "timeout": timeout, "sleep": pauses.append, **options}


CLIENTS = [
    ("chat", lambda base, pauses, timeout, **options: OpenAIChat(
        "m", base_url=base + "/v1", notice=False, **_options(pauses, timeout, options)).chat,
     lambda base: base + "/v1"),
    ("openai-embedder", lambda base, pauses, timeout, **options: lambda: OpenAIEmbedder(
        "m", base_url=base + "/v1", **_options(pauses, timeout, options))(["x"]),
     lambda base: base + "/v1"),
    ("http-embedder", lambda base, pauses, timeout, **options: lambda: Custom(
        base + "/custom/embed", **_options(pauses, timeout, options))(["x"]),
     lambda base: base + "/custom/embed"),
    ("rerank", lambda base, pauses, timeout, **options: lambda: RerankEndpoint(
        "m", base_url=base, **_options(pauses, timeout, options))("q", ["x"]),
     lambda base: base + "/rerank"),
]
IDS = [name for name, _, _ in CLIENTS]


@pytest.fixture(scope="module")
def shared():
    standin = StandIn()
    yield standin
    standin.close()


@pytest.fixture()
def standin(shared):
    shared.plan, shared.requests, shared.error_headers = [], [], {}
    shared.malformed, shared.delay, shared.raw, shared.reply = False, 0.0, None, None
    return shared


def base_of(standin):
    return standin.url.removesuffix("/v1")


def call(client):
    """Call what ``build`` gave: the chat client's ``chat`` takes a prompt, the rest nothing."""
    return client("x") if client.__name__ == "chat" else client()


def failure(client, kind):
    with pytest.raises(kind) as caught:
        call(client)
    return caught.value


def test_the_family_and_its_old_names():
    for kind in (RemoteConnectionError, RemoteTimeout, RemoteHTTPError, MalformedReply):
        assert issubclass(kind, RemoteError) and issubclass(kind, RuntimeError)
        assert getattr(course_lib, kind.__name__) is kind
    assert issubclass(MalformedReply, ValueError)  # what malformed replies raised before
    assert LLMError is EmbeddingEndpointError is http_json.EndpointError is RemoteError


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_a_server_not_listening_is_a_connection_error_naming_it(name, build, endpoint):
    pauses = []
    error = failure(build(NOWHERE, pauses, 2.0), RemoteConnectionError)
    assert error.endpoint == endpoint(NOWHERE) and endpoint(NOWHERE) in str(error)
    assert len(pauses) == 1  # retried once, as the policy says


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_a_silent_server_is_a_timeout_naming_it(name, build, endpoint):
    silent = StandIn()  # its own: the late answers must not take another test's script
    silent.delay = 1.0
    try:
        error = failure(build(base_of(silent), [], 0.3), RemoteTimeout)
    finally:
        silent.close()
    assert error.endpoint == endpoint(base_of(silent)) and error.endpoint in str(error)


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_an_error_status_is_an_http_error_with_the_status(standin, name, build, endpoint):
    standin.plan = [401]
    error = failure(build(base_of(standin), [], 2.0), RemoteHTTPError)
    assert error.status == 401 and error.endpoint == endpoint(base_of(standin))
    assert error.endpoint in str(error)


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_a_reply_off_the_protocol_is_malformed(standin, name, build, endpoint):
    standin.malformed = True
    error = failure(build(base_of(standin), [], 2.0), MalformedReply)
    assert error.endpoint == endpoint(base_of(standin)) and error.endpoint in str(error)


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_a_200_json_reply_whose_body_is_not_json_is_malformed(standin, name, build, endpoint):
    """HTTP 200, ``Content-Type: application/json``, and a body that is not JSON: every
    client says so and names its endpoint (the chat client once let json's own error out)."""
    standin.raw = b"<html>busy</html>"
    error = failure(build(base_of(standin), [], 2.0), MalformedReply)
    assert error.endpoint == endpoint(base_of(standin)) and error.endpoint in str(error)
    assert "not JSON" in str(error)


def test_a_reply_that_is_not_json_is_malformed(standin):
    standin.raw = b"<html>busy</html>"
    with pytest.raises(MalformedReply, match="not JSON") as caught:
        transports.post_json(standin.url + "/rerank", {}, what="demo", retries=0)
    assert caught.value.endpoint == standin.url + "/rerank"


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_every_client_retries_503_and_not_400_with_the_one_policy(
        standin, monkeypatch, name, build, endpoint):
    # The policy's numbers live once, in http_json: changing them there changes every client.
    monkeypatch.setattr(http_json, "FIRST_WAIT", 0.125)
    pauses = []
    call = build(base_of(standin), pauses, 2.0)
    standin.plan = [503]
    call("x") if name == "chat" else call()
    assert len(standin.requests) == 2 and len(pauses) == 1
    assert 0.125 * 0.75 <= pauses[0] <= 0.125  # FIRST_WAIT minus up to 25 % jitter
    standin.plan, standin.requests = [400], []
    failure(call, RemoteHTTPError)
    assert len(standin.requests) == 1 and len(pauses) == 1  # a 400 is not retried
    standin.plan, standin.requests = [429], []
    standin.error_headers = {"Retry-After": "3600"}  # honoured up to MAX_RETRY_AFTER
    monkeypatch.setattr(http_json, "MAX_RETRY_AFTER", 2.0)
    call("x") if name == "chat" else call()
    assert pauses[-1] == 2.0 and len(standin.requests) == 2


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_every_client_checks_timeout_deadline_and_retries_alike(name, build, endpoint):
    # One check, one message: before any request, for every client.
    for argument, value in (("timeout", 0), ("timeout", float("nan")), ("deadline", "5"),
                            ("deadline", 3601), ("deadline", None)):
        options = {"deadline": value} if argument == "deadline" else {}
        with pytest.raises(ValueError, match=rf"^{argument} must be a number of seconds in "
                                             rf"\(0, 3600\], got {re.escape(repr(value))}$"):
            call(build(NOWHERE, [], value if argument == "timeout" else 2.0, **options))
    for value in (-1, 11, True, 2.5):
        with pytest.raises(ValueError, match=rf"^retries must be an integer in \[0, 10\], "
                                             rf"got {re.escape(repr(value))}$"):
            call(build(NOWHERE, [], 2.0, retries=value))


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_every_client_takes_no_wait_past_its_deadline(standin, name, build, endpoint):
    # Retry-After: 50 is within what the policy honours (60 s), not within a deadline of
    # 5 s: the call fails at once, saying so, instead of sleeping 50 s.
    pauses = []
    standin.plan, standin.error_headers = [503], {"Retry-After": "50"}
    error = failure(build(base_of(standin), pauses, 2.0, deadline=5), RemoteHTTPError)
    assert len(standin.requests) == 1 and pauses == [] and error.status == 503
    assert "failed after 1 try" in str(error)
    assert "not retried: a retry would wait 50 s, past the deadline of 5 s" in str(error)


@pytest.mark.parametrize("name, build, endpoint", CLIENTS, ids=IDS)
def test_every_client_is_cut_off_at_its_deadline(name, build, endpoint):
    silent = StandIn()  # its own: the late answers must not take another test's script
    silent.delay = 3.0
    start = time.monotonic()
    try:
        error = failure(build(base_of(silent), [], 30.0, deadline=0.5, retries=3), RemoteTimeout)
    finally:
        seconds = time.monotonic() - start
        silent.close()
    assert seconds < 0.5 + 1.5  # a bound on a hang, with a margin
    assert error.endpoint == endpoint(base_of(silent))
    assert re.search(r"gave no complete reply within the deadline of 0\.5 s \(1 try, each "
                     r"allowed timeout=30 s; .*pass larger timeout= and deadline= \(seconds\) "
                     r"to \w+", str(error)), str(error)


# -- the one loop -------------------------------------------------------------------------
RETRY_NAMES = re.compile(r"\bretr(y|ies)\b|\battempts?\b")


def retry_loops(package):
    """Where under ``package`` a loop retries: a ``for`` over a range of retries (or
    attempts) or a ``while`` on them, or a wait of the policy (``retry_wait``) computed
    anywhere. {module path: [line, ...]}."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                    and ast.unparse(node.iter.func) == "range":
                loop = RETRY_NAMES.search(ast.unparse(node.iter))
            elif isinstance(node, ast.While):
                loop = RETRY_NAMES.search(ast.unparse(node.test))
            else:
                loop = isinstance(node, ast.Call) and \
                    ast.unparse(node.func).split(".")[-1] == "retry_wait"
            if loop:
                found.setdefault(str(path.relative_to(package)), []).append(node.lineno)
    return found


def test_the_package_has_one_retry_loop(tmp_path):
    package = Path(course_lib.__file__).parent
    found = retry_loops(package)
    assert list(found) == ["_support/http_json.py"], found
    lines, start = inspect.getsourcelines(http_json.retrying)
    assert all(start <= line < start + len(lines) for line in found["_support/http_json.py"])
    # and the scan sees another: a client retrying by itself, as three did before
    (tmp_path / "client.py").write_text(
        "def call(self):\n"
        "    for retry in range(self.retries + 1):\n"
        "        pass\n"
        "    while attempt <= self.max_retries:\n"
        "        self.sleep(retry_wait(attempt))\n", encoding="utf-8")
    assert retry_loops(tmp_path) == {"client.py": [2, 4, 5]}
    # the openai client's own retries stay off wherever it is built
    for path in package.rglob("*.py"):
        for call in re.findall(r"\bOpenAI\((.*?)\)", path.read_text(encoding="utf-8"), re.S):
            assert "max_retries=0" in call, path
