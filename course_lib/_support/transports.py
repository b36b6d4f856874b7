"""The HTTP plumbing of every remote client: a deadline for every socket wait, JSON over
HTTP (:func:`post_json`), and what an ``openai`` error means in the terms of
:mod:`course_lib._support.http_json`.

Every remote client promises that each call ends within its deadline, whatever the
server does. ``httpx2`` (under the ``openai`` client and :func:`post_json`) bounds each
*socket operation*, not a whole try, so a server that drips one byte every 2 s would never
time out. Here its network layer (the ``httpcore2`` network backend) is wrapped so
that every connect, send and receive waits at most for the time left of the current try
and of the whole call (the :class:`~course_lib._support.http_json.Clock` that
:func:`~course_lib._support.http_json.retrying` runs the call on). Outside such a call
the wrapped layer changes nothing. Not bounded: the operating system's own name lookup
(DNS) for the host.

Imports nothing of ``course_lib`` outside ``_support``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .http_json import (
    Clock,
    MalformedReply,
    RemoteConnectionError,
    RemoteError,
    RemoteHTTPError,
    RemoteTimeout,
    TryFailed,
    current_clock,
    is_retried,
    parse_retry_after,
    refused,
    retrying,
)

T = TypeVar("T")

URL_EXAMPLE = "e.g. 'https://api.openai.com/v1' or 'http://localhost:11434/v1'"


# -- the transport -----------------------------------------------------------------------
def deadline_transport(url: str, who: str = "OpenAIChat") -> Any:
    """An ``httpx2`` transport for ``url`` whose every socket operation keeps to the clock.

    ``httpx2``'s own transport (through the proxy the environment names for ``url``, if
    any), its connection pool given a network backend that cuts each wait to the time
    left. The network backend is set on the pool's ``_network_backend``: the one private
    attribute used, checked here (pinned versions: httpx2 and httpcore2 2.16.2, see
    constraints.txt). Pass it with ``trust_env=False`` to the client, so that the proxy
    too goes through it (the client would otherwise open its own for the proxy).
    """
    import httpx2

    transport = httpx2.HTTPTransport(proxy=environment_proxy(url))
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None or not callable(getattr(backend, "connect_tcp", None)):
        raise RuntimeError(f"{who} needs httpx2's HTTPTransport to keep its connection "
                           "pool in ._pool with a ._network_backend, as httpx2 2.16 does: "
                           "install the versions in constraints.txt")
    pool._network_backend = DeadlineBackend(backend)
    return transport


def environment_proxy(url: str) -> str | None:
    """The proxy that ``*_PROXY`` / ``NO_PROXY`` (or the system's settings) name for ``url``."""
    import urllib.request

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if not proxies or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


class DeadlineBackend:
    """An ``httpcore2`` network backend whose connections keep to the thread's clock."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> DeadlineStream:
        return DeadlineStream(within_deadline(
            lambda left: self._inner.connect_tcp(host, port, left, local_address,
                                                 socket_options), timeout, "connect"))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> DeadlineStream:
        return DeadlineStream(within_deadline(
            lambda left: self._inner.connect_unix_socket(path, left, socket_options),
            timeout, "connect"))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineStream:
    """An ``httpcore2`` network stream whose every wait is cut to the time left."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return within_deadline(lambda left: self._inner.read(max_bytes, left), timeout, "read")

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        within_deadline(lambda left: self._inner.write(buffer, left), timeout, "write")

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> DeadlineStream:
        return DeadlineStream(within_deadline(
            lambda left: self._inner.start_tls(ssl_context, server_hostname, left), timeout,
            "connect"))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def within_deadline(operation: Callable[[float | None], Any], timeout: float | None,
                    kind: str) -> Any:
    """``operation(wait)``, its ``wait`` the smaller of ``timeout`` and the try's time left.

    Outside a call's clock, ``operation(timeout)``. When the try's time is up, an
    ``httpcore2`` timeout, recorded on the clock.
    """
    import httpcore2

    clock = current_clock()
    if clock is None:
        return operation(timeout)
    errors = {"connect": httpcore2.ConnectTimeout, "read": httpcore2.ReadTimeout,
              "write": httpcore2.WriteTimeout}
    left = clock.try_deadline - time.monotonic()
    try:
        if left <= 0:  # a wait of 0 would make the socket non-blocking, not time out
            raise errors[kind](f"no time left for this try ({kind})")
        return operation(left if timeout is None else min(timeout, left))
    except httpcore2.TimeoutException:
        clock.timed_out()
        raise


# -- JSON over HTTP ----------------------------------------------------------------------
def post_json(url: str, payload: Any, *, what: str, headers: dict[str, str] | None = None,
              timeout: float = 30.0, deadline: float = 120.0, retries: int = 2,
              who: str = "the client", sleep: Callable[[float], object] = time.sleep) -> Any:
    """POST ``payload`` as JSON to ``url``; return the decoded JSON reply.

    ``what`` names the service in errors ("embedding endpoint"), ``who`` the client whose
    ``timeout=`` and ``deadline=`` to raise. The time rule and the retries are
    :func:`~course_lib._support.http_json.retrying`'s, kept by :func:`deadline_transport`
    as for the ``openai`` clients: each try may take ``timeout`` seconds, the whole call
    ``deadline``; a server that drips one byte at a time is cut off like a silent one.
    ``sleep`` does the waiting (tests pass one that records). Failures are
    :class:`RemoteError` subclasses with ``endpoint=url``.

    >>> post_json("http://127.0.0.1:9/x", {}, what="demo endpoint", retries=0, timeout=1)
    Traceback (most recent call last):
    ...
    course_lib._support.http_json.RemoteConnectionError: demo endpoint http://127.0.0.1:9/x \
failed after 1 try: could not connect (ConnectError)
    """
    import httpx2

    where = f"{what} {url}"
    with httpx2.Client(transport=deadline_transport(url, who), trust_env=False,
                       timeout=timeout) as client:
        return retrying(lambda clock: _post_once(client, url, payload, headers or {}, clock,
                                                 where),
                        where=where, endpoint=url, retries=retries, timeout=timeout,
                        deadline=deadline, who=who, sleep=sleep)


def _post_once(client: Any, url: str, payload: Any, headers: dict[str, str], clock: Clock,
               where: str) -> Any:
    """One try of :func:`post_json`; every socket wait cut to the try's time on ``clock``."""
    import httpx2

    try:
        response = client.post(url, json=payload, headers=headers)
    except httpx2.TimeoutException as error:
        limit = "before the deadline" if clock.out_of_time else \
            f"within timeout={clock.timeout:g} s"
        raise TryFailed(RemoteTimeout, f"no complete reply {limit} "
                                       f"({type(error).__name__})") from error
    except httpx2.ConnectError as error:
        raise TryFailed(RemoteConnectionError,
                        f"could not connect ({type(error).__name__})") from error
    except httpx2.TransportError as error:  # the connection broke off
        raise TryFailed(RemoteConnectionError, f"{type(error).__name__}: {error}") from error
    status, text = response.status_code, response.content.decode("utf-8", "replace")
    if is_retried(status):
        raise TryFailed(RemoteHTTPError, f"HTTP {status}", status=status,
                        retry_after=parse_retry_after(response.headers))
    if status >= 400:
        raise refused(where, status, text, url)
    try:
        return json.loads(text)
    except ValueError:
        raise MalformedReply(f"{where} replied with something that is not JSON "
                             f"(HTTP {status}): {text[:120]!r}", url) from None


# -- openai's errors, in this family's terms ---------------------------------------------
def openai_try(create: Callable[[], T], clock: Clock, where: str, url: str,
               expected: str) -> T:
    """One try of an ``openai`` client call, ``create()``, its errors in this family's terms.

    What the retry policy retries (a timeout, a lost connection, HTTP 408, 409, 429, 5xx)
    becomes a :class:`~course_lib._support.http_json.TryFailed` for
    :func:`~course_lib._support.http_json.retrying`; any other status is
    :func:`~course_lib._support.http_json.refused`, another ``openai`` error a
    :class:`RemoteError`, a reply that cannot be read a :class:`MalformedReply` (of
    ``expected``). Messages name ``where``. The client runs with ``max_retries=0``.
    """
    import openai

    try:
        return create()
    except openai.APITimeoutError as error:  # a subclass of APIConnectionError
        problem = clock.failure or "not answering (no complete reply in time)"
        raise TryFailed(RemoteTimeout, problem, detail=(
            f"{type(error).__name__}: {error} (no complete reply within timeout="
            f"{clock.timeout:g} s per try; pass a larger timeout= for a slow server)")) from error
    except openai.APIConnectionError as error:
        cause = error.__cause__ or error
        problem = f"not reachable ({type(cause).__name__}: {str(cause) or type(cause).__name__})"
        raise TryFailed(RemoteConnectionError, problem,
                        detail=f"{type(error).__name__}: {error} ({problem})") from error
    except openai.APIStatusError as error:
        status = error.status_code
        if not is_retried(status):
            raise refused(where, status, error.message, url) from error
        problem = f"answered HTTP {status}"
        raise TryFailed(RemoteHTTPError, problem, status=status,
                        retry_after=parse_retry_after(error.response.headers),
                        detail=f"{type(error).__name__}: {error} ({problem})") from error
    except openai.OpenAIError as error:
        raise RemoteError(f"{where} failed: {type(error).__name__}: {error}", url) from error
    except ValueError as error:  # not JSON, or the client's own check of the reply's shape
        raise openai_malformed(error, where, url, expected) from error


def openai_malformed(error: ValueError, where: str, url: str, expected: str) -> MalformedReply:
    """The :class:`MalformedReply` for a ``ValueError`` the ``openai`` client raised while
    reading a reply: a body that is not JSON at all (even under a JSON content type), or
    JSON that is not ``expected``. Its message names ``where``.

    >>> str(openai_malformed(json.JSONDecodeError("Expecting value", "<html>", 0),
    ...                      "chat at http://x/v1", "http://x/v1", "a chat completion"))
    "chat at http://x/v1 replied with something that is not JSON: '<html>'"
    """
    if isinstance(error, json.JSONDecodeError):
        return MalformedReply(f"{where} replied with something that is not JSON: "
                              f"{error.doc[:120]!r}", url)
    return MalformedReply(f"{where} sent a reply that is not {expected}: {error}", url)


# -- checks ------------------------------------------------------------------------------
def check_base_url(url: Any, name: str = "base_url") -> str:
    """``url`` without surrounding spaces if it is an ``http://`` or ``https://`` URL
    with a host; otherwise a ``ValueError`` (``TypeError`` for a non-string) that names
    ``name``, shows the URL, says what is wrong and what a valid one looks like.

    Checked before any request, so that a typo is not retried as a connection error.

    >>> check_base_url(" http://localhost:11434/v1 ")
    'http://localhost:11434/v1'
    >>> check_base_url("htp//localhost:11434/v1", "COURSE_LLM_BASE_URL")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: COURSE_LLM_BASE_URL must be an http:// or https:// URL with a host, ...
    """
    if not isinstance(url, str):
        raise TypeError(f"{name} must be a URL string ({URL_EXAMPLE}), got "
                        f"{type(url).__name__}")
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        problem: str | None = str(error)
    else:
        if not text:
            problem = "it is empty"
        elif any(char.isspace() for char in text):
            problem = "it contains a space"
        elif "://" not in text:
            problem = "it does not start with http:// or https://"
        elif parts.scheme.lower() not in ("http", "https"):
            problem = f"its scheme {parts.scheme!r} is not http or https"
        elif not parts.hostname:
            problem = "it has no host name"
        elif parts.path.rstrip("/").endswith("/chat/completions"):
            problem = ("it ends in /chat/completions, which the client adds itself: give "
                       "the part before it")
        else:
            problem = None
    if problem:
        raise ValueError(f"{name} must be an http:// or https:// URL with a host, "
                         f"{URL_EXAMPLE}; got {url!r}: {problem}")
    return text
