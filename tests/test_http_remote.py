"""One family of errors and one retry policy for every remote client, on real local HTTP."""

import pytest
from openai_standin import StandIn

import course_lib
from course_lib._support import http_json
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


# Each client: (name, build(base, pauses, timeout) -> a call with no arguments, the
# endpoint its errors name for a given base URL).
CLIENTS = [
    ("chat", lambda base, pauses, timeout: OpenAIChat(
        "m", base_url=base + "/v1", retries=1, timeout=timeout, notice=False,
        sleep=pauses.append).chat, lambda base: base + "/v1"),
    ("openai-embedder", lambda base, pauses, timeout: lambda: OpenAIEmbedder(
        "m", base_url=base + "/v1", max_retries=1, timeout=timeout,
        sleep=pauses.append)(["x"]), lambda base: base + "/v1"),
    ("http-embedder", lambda base, pauses, timeout: lambda: Custom(
        base + "/custom/embed", retries=1, timeout=timeout, sleep=pauses.append)(["x"]),
     lambda base: base + "/custom/embed"),
    ("rerank", lambda base, pauses, timeout: lambda: RerankEndpoint(
        "m", base_url=base, retries=1, timeout=timeout, sleep=pauses.append)("q", ["x"]),
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


def failure(call, kind):
    with pytest.raises(kind) as caught:
        call("x") if call.__name__ == "chat" else call()
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
        http_json.post_json(standin.url + "/rerank", {}, what="demo", retries=0)
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
