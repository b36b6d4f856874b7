"""The HTTP plumbing of remote clients (course_lib._support.transports): every socket wait
cut to the time left of the try, unchanged outside a call; post_json on real local HTTP
(the reply, the headers, retries, refusals, a drip cut off); the proxy the environment
names; openai's errors in the family's terms; and the check of a base URL."""

import http.server
import json
import threading
import time

import httpcore2
import httpx2
import openai
import pytest

from course_lib._support import transports
from course_lib._support.http_json import (
    Clock,
    MalformedReply,
    RemoteConnectionError,
    RemoteError,
    RemoteHTTPError,
    RemoteTimeout,
    TryFailed,
)
from course_lib._support.transports import (
    DeadlineBackend,
    DeadlineStream,
    check_base_url,
    environment_proxy,
    openai_malformed,
    openai_try,
    post_json,
    within_deadline,
)


# ------------------------------------------------------------------ a scripted server
class Server:
    """Answers each POST with the next of ``script`` ((status, headers, body, drip)), then
    with 200 and the JSON ``{"ok": true}``; records (path, headers, JSON body)."""

    def __init__(self):
        self.script, self.requests = [], []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, dict(self.headers), body))
                status, headers, data, drip = (server.script.pop(0) if server.script else
                                               (200, {}, b'{"ok": true}', 0.0))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for i in range(len(data)) if drip else [None]:
                        time.sleep(drip)
                        self.wfile.write(data[i:i + 1] if drip else data)
                        self.wfile.flush()
                except OSError:
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/api"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def server():
    running = Server()
    yield running
    running.close()


@pytest.fixture()
def no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    return monkeypatch


# ------------------------------------------------------------------ post_json
def test_post_json_sends_json_with_the_headers_and_returns_the_reply(server, no_proxy):
    server.script = [(200, {"Content-Type": "application/json"},
                      json.dumps({"vectors": [[1, 2]], "名": "长城"}).encode("utf-8"), 0.0)]
    reply = post_json(server.url + "/embed", {"texts": ["长城"]}, what="demo endpoint",
                      headers={"Authorization": "Bearer k"})
    assert reply == {"vectors": [[1, 2]], "名": "长城"}
    path, headers, body = server.requests[0]
    assert path == "/api/embed" and body == {"texts": ["长城"]}
    assert headers["Authorization"] == "Bearer k"
    assert headers["Content-Type"] == "application/json"


def test_post_json_retries_a_503_waiting_what_the_server_asks(server, no_proxy):
    pauses = []
    server.script = [(503, {"Retry-After": "2"}, b"busy", 0.0)]
    assert post_json(server.url, {}, what="demo", retries=1, sleep=pauses.append) == \
        {"ok": True}
    assert pauses == [2.0] and len(server.requests) == 2


def test_post_json_does_not_retry_a_refusal_and_names_the_endpoint(server, no_proxy):
    pauses = []
    server.script = [(404, {}, b"no such route", 0.0)]
    with pytest.raises(RemoteHTTPError) as caught:
        post_json(server.url + "/x", {}, what="rerank endpoint", retries=2,
                  sleep=pauses.append)
    error = caught.value
    assert error.status == 404 and error.endpoint == server.url + "/x"
    assert str(error) == f"rerank endpoint {server.url}/x refused the request (HTTP 404): " \
                         "no such route"
    assert pauses == [] and len(server.requests) == 1


def test_post_json_gives_up_after_the_retries_with_the_last_status(server, no_proxy):
    server.script = [(500, {}, b"", 0.0)] * 3
    with pytest.raises(RemoteHTTPError, match=r"demo .* failed after 3 tries: HTTP 500") as caught:
        post_json(server.url, {}, what="demo", retries=2, sleep=lambda seconds: None)
    assert caught.value.status == 500 and len(server.requests) == 3


def test_a_reply_that_is_not_json_is_malformed_and_not_retried(server, no_proxy):
    server.script = [(200, {}, b"<html>" + b"x" * 500, 0.0)]
    with pytest.raises(MalformedReply, match=r"replied with something that is not JSON "
                                             r"\(HTTP 200\): '<html>x+'$") as caught:
        post_json(server.url, {}, what="demo", retries=2)
    assert len(str(caught.value)) < 300 and len(server.requests) == 1  # the body cut short


def test_a_dripping_reply_is_cut_off_by_the_timeout_of_the_try(server, no_proxy):
    server.script = [(200, {}, b'{"ok": true, "padding": "' + b"x" * 100 + b'"}', 0.1)]
    start = time.monotonic()
    with pytest.raises(RemoteTimeout, match="no complete reply within timeout=0.5 s") as caught:
        post_json(server.url, {}, what="demo", retries=0, timeout=0.5)
    # a drip of about 12 s, cut after the try's 0.5 s (wide slack: CI runs notebooks beside it)
    assert time.monotonic() - start < 6
    assert caught.value.endpoint == server.url


def test_a_dripping_reply_is_cut_off_by_the_deadline_across_retries(server, no_proxy):
    server.script = [(200, {}, b'{"ok": true, "padding": "' + b"x" * 100 + b'"}', 0.1)] * 3
    start = time.monotonic()
    with pytest.raises(RemoteTimeout, match="within the deadline of 0.6 s"):
        post_json(server.url, {}, what="demo", retries=2, timeout=30, deadline=0.6,
                  sleep=lambda seconds: None)
    assert time.monotonic() - start < 6  # three drips would take 36 s


def test_a_server_not_listening_is_a_connection_error(no_proxy):
    with pytest.raises(RemoteConnectionError, match="could not connect") as caught:
        post_json("http://127.0.0.1:9/x", {}, what="demo", retries=1, timeout=1,
                  sleep=lambda seconds: None)
    assert "after 2 tries" in str(caught.value)


# ------------------------------------------------------------------ the deadline layer
class FakeStream:
    def __init__(self, waits):
        self.waits = waits

    def read(self, max_bytes, timeout=None):
        self.waits.append(("read", timeout))
        return b"data"

    def write(self, buffer, timeout=None):
        self.waits.append(("write", timeout))

    def close(self):
        self.waits.append(("close", None))

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        self.waits.append(("tls", timeout))
        return self

    def get_extra_info(self, info):
        return f"info {info}"


class FakeBackend:
    def __init__(self):
        self.waits = []

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.waits.append(("connect", timeout))
        return FakeStream(self.waits)

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        self.waits.append(("unix", timeout))
        return FakeStream(self.waits)

    def sleep(self, seconds):
        self.waits.append(("sleep", seconds))


def test_outside_a_call_every_wait_is_the_callers_own():
    inner = FakeBackend()
    stream = DeadlineBackend(inner).connect_tcp("h", 1, timeout=7.0)
    assert isinstance(stream, DeadlineStream)
    assert stream.read(10, timeout=5.0) == b"data"
    stream.write(b"x", timeout=None)
    assert isinstance(stream.start_tls(None, "h", timeout=3.0), DeadlineStream)
    assert stream.get_extra_info("socket") == "info socket"
    stream.close()
    DeadlineBackend(inner).sleep(0.25)
    assert inner.waits == [("connect", 7.0), ("read", 5.0), ("write", None), ("tls", 3.0),
                           ("close", None), ("sleep", 0.25)]


def test_within_a_call_every_wait_is_cut_to_the_time_left_of_the_try():
    inner = FakeBackend()
    clock = Clock(timeout=2.0, deadline=100.0)
    clock.start_try()
    with clock.running():
        stream = DeadlineBackend(inner).connect_tcp("h", 1, timeout=60.0)
        stream.read(10, timeout=1.0)  # shorter than the time left: kept
        stream.write(b"x", timeout=None)  # no timeout of its own: the time left
        DeadlineBackend(inner).connect_unix_socket("/s", timeout=None)
    (_, connect), (_, read), (_, write), (_, unix) = inner.waits
    assert 1.5 < connect <= 2.0 and read == 1.0 and 1.5 < write <= 2.0 and 1.5 < unix <= 2.0
    assert clock.failure is None


@pytest.mark.parametrize("kind, error", [("connect", httpcore2.ConnectTimeout),
                                         ("read", httpcore2.ReadTimeout),
                                         ("write", httpcore2.WriteTimeout)])
def test_with_no_time_left_no_wait_is_made_and_the_clock_records_it(kind, error):
    clock = Clock(timeout=0.01, deadline=100.0)
    clock.start_try()
    time.sleep(0.02)
    called = []
    with clock.running(), pytest.raises(error, match=f"no time left for this try \\({kind}\\)"):
        within_deadline(called.append, None, kind)
    assert called == []  # a wait of 0 would make the socket non-blocking: not made
    assert clock.failure == "not answering (no complete reply within 0.01 s)"
    assert clock.out_of_time is False


def test_a_timeout_of_the_socket_is_recorded_on_the_clock_as_the_deadline():
    clock = Clock(timeout=50.0, deadline=1.0)  # the call's deadline comes first
    clock.start_try()

    def times_out(wait):
        raise httpcore2.ReadTimeout("slow")

    with clock.running(), pytest.raises(httpcore2.ReadTimeout):
        within_deadline(times_out, 30.0, "read")
    assert clock.out_of_time is True
    assert clock.failure == "not answering (no complete reply before the deadline)"


def test_the_transport_keeps_to_the_clock_and_routes_through_the_environments_proxy(
        no_proxy):
    no_proxy.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    transport = transports.deadline_transport("http://llm.example/v1")
    assert isinstance(transport._pool._network_backend, DeadlineBackend)
    assert type(transport._pool).__name__ == "HTTPProxy"


def test_a_transport_without_the_expected_pool_is_refused_naming_the_client(monkeypatch):
    class NoPool:
        def __init__(self, proxy=None):
            pass

    monkeypatch.setattr(httpx2, "HTTPTransport", NoPool)
    with pytest.raises(RuntimeError, match=r"^RerankEndpoint needs httpx2's HTTPTransport"):
        transports.deadline_transport("http://127.0.0.1:9", who="RerankEndpoint")


# ------------------------------------------------------------------ the proxy
def test_the_proxy_the_environment_names_for_a_url(no_proxy):
    assert environment_proxy("http://llm.example/v1") is None
    no_proxy.setenv("HTTP_PROXY", "http://proxy:3128")
    no_proxy.setenv("HTTPS_PROXY", "http://secure-proxy:3128")
    assert environment_proxy("http://llm.example/v1") == "http://proxy:3128"
    assert environment_proxy("https://llm.example/v1") == "http://secure-proxy:3128"
    no_proxy.setenv("NO_PROXY", "llm.example,localhost")
    assert environment_proxy("http://llm.example/v1") is None
    assert environment_proxy("http://other.example/v1") == "http://proxy:3128"
    no_proxy.delenv("HTTP_PROXY")
    no_proxy.setenv("ALL_PROXY", "socks5://any:1080")
    assert environment_proxy("http://other.example/v1") == "socks5://any:1080"


# ------------------------------------------------------------------ openai's errors
REQUEST = httpx2.Request("POST", "http://llm.example/v1/chat/completions")


def status_error(status, headers=None):
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    return openai.APIStatusError(f"status {status}", response=response, body=None)


def attempt(error):
    def create():
        raise error
    clock = Clock(timeout=3.0, deadline=10.0)
    return lambda: openai_try(create, clock, "chat at http://x/v1", "http://x/v1",
                              "a chat completion")


def test_openai_try_returns_what_the_call_returns():
    assert openai_try(lambda: "reply", Clock(1.0, 2.0), "w", "u", "e") == "reply"


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503])
def test_a_status_worth_retrying_is_a_try_failed_with_the_wait_asked_for(status):
    with pytest.raises(TryFailed) as caught:
        attempt(status_error(status, {"retry-after-ms": "1500"}))()
    failed = caught.value
    assert failed.kind is RemoteHTTPError and failed.status == status
    assert failed.retry_after == 1.5 and failed.problem == f"answered HTTP {status}"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_any_other_status_is_refused_at_once(status):
    with pytest.raises(RemoteHTTPError, match=rf"chat at http://x/v1 refused the request "
                                              rf"\(HTTP {status}\)") as caught:
        attempt(status_error(status))()
    assert caught.value.status == status and caught.value.endpoint == "http://x/v1"


def test_a_timeout_and_a_lost_connection_are_tries_that_failed():
    with pytest.raises(TryFailed) as caught:
        attempt(openai.APITimeoutError(request=REQUEST))()
    assert caught.value.kind is RemoteTimeout
    assert "pass a larger timeout= for a slow server" in caught.value.detail
    lost = openai.APIConnectionError(request=REQUEST)
    lost.__cause__ = ConnectionResetError("reset by peer")
    with pytest.raises(TryFailed) as caught:
        attempt(lost)()
    assert caught.value.kind is RemoteConnectionError
    assert caught.value.problem == "not reachable (ConnectionResetError: reset by peer)"


def test_other_openai_errors_and_unreadable_replies_are_remote_errors():
    with pytest.raises(RemoteError, match=r"^chat at http://x/v1 failed: OpenAIError: odd") \
            as caught:
        attempt(openai.OpenAIError("odd"))()
    assert type(caught.value) is RemoteError and caught.value.endpoint == "http://x/v1"
    with pytest.raises(MalformedReply, match="not a chat completion: missing choices"):
        attempt(ValueError("missing choices"))()
    with pytest.raises(MalformedReply, match="not JSON: '<html>'"):
        attempt(json.JSONDecodeError("Expecting value", "<html>", 0))()


def test_openai_malformed_cuts_a_long_body():
    error = openai_malformed(json.JSONDecodeError("x", "<" * 1000, 0), "w", "u", "e")
    assert isinstance(error, ValueError) and error.endpoint == "u"
    assert str(error) == f"w replied with something that is not JSON: {'<' * 120!r}"


# ------------------------------------------------------------------ the base URL
def test_a_base_url_that_is_not_a_string_is_a_type_error_naming_the_setting():
    for value in (None, b"http://x/v1", 8000):
        with pytest.raises(TypeError, match=rf"^api_base must be a URL string \(e\.g\. .*\), "
                                            rf"got {type(value).__name__}$"):
            check_base_url(value, "api_base")


@pytest.mark.parametrize("url, problem", [
    ("http://exa\tmple.com/v1", "it contains a space"),
    ("ftp://example.com/v1", "its scheme 'ftp' is not http or https"),
    ("http://example.com/v1/chat/completions/", "it ends in /chat/completions, which the "
     "client adds itself: give the part before it"),
    ("   ", "it is empty"),
])
def test_a_bad_base_url_is_named_with_what_is_wrong(url, problem):
    with pytest.raises(ValueError) as caught:
        check_base_url(url, "MY_URL")
    assert str(caught.value).startswith("MY_URL must be an http:// or https:// URL with a host")
    assert str(caught.value).endswith(f"; got {url!r}: {problem}")


def test_a_good_base_url_is_returned_as_written_without_spaces():
    assert check_base_url("\tHTTPS://Example.com:8443/v1/\n") == "HTTPS://Example.com:8443/v1/"
