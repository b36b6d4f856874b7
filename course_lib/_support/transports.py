"""The HTTP plumbing under the ``openai`` client: a deadline for every socket wait, and
what an ``openai`` error means in the terms of :mod:`course_lib._support.http_json`.

:class:`~course_lib.llm.OpenAIChat` promises that each call ends within its deadline,
whatever the server does. The ``openai`` client bounds each *socket operation*, not a
whole try, so a server that drips one byte every 2 s would never time out. Here the
client's network layer (the ``httpcore2`` network backend under ``httpx2``) is wrapped so
that every connect, send and receive waits at most for the time left of the current try
and of the whole call (a :class:`Clock`, set for the calling thread by
:meth:`Clock.running`). Outside such a call the wrapped layer changes nothing. Not
bounded: the operating system's own name lookup (DNS) for the host.

Imports nothing of ``course_lib`` outside ``_support``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from .http_json import (
    MalformedReply,
    RemoteConnectionError,
    RemoteError,
    RemoteHTTPError,
    RemoteTimeout,
    is_retried,
    parse_retry_after,
)

URL_EXAMPLE = "e.g. 'https://api.openai.com/v1' or 'http://localhost:11434/v1'"


# -- the clock of one call -------------------------------------------------------------
class Clock:
    """The deadline of one call (``deadline`` seconds from now) and of its current try
    (``timeout`` seconds from :meth:`start_try`, never past the call's deadline)."""

    def __init__(self, timeout: float, deadline: float) -> None:
        self.timeout, self.budget = timeout, deadline
        self.deadline = time.monotonic() + deadline  # the whole call
        self.try_deadline = self.deadline             # the current try
        self.failure: str | None = None               # how the current try timed out
        self.out_of_time = False                      # the call's deadline cut a try

    def left(self) -> float:
        """Seconds left of the whole call."""
        return self.deadline - time.monotonic()

    def start_try(self) -> None:
        self.try_deadline = min(time.monotonic() + self.timeout, self.deadline)
        self.failure = None

    def timed_out(self) -> None:
        """A socket operation ran out of the try's time: record how, and whether the
        call's deadline (not the try's timeout) was what ran out."""
        self.out_of_time = self.try_deadline >= self.deadline
        self.failure = ("not answering (no complete reply before the deadline)"
                        if self.out_of_time else
                        f"not answering (no complete reply within {self.timeout:g} s)")

    @contextmanager
    def running(self) -> Iterator[Clock]:
        """Make this the clock of the calling thread's socket operations, for the block."""
        _CLOCKS.current = self
        try:
            yield self
        finally:
            _CLOCKS.current = None


class _ClockSlot(threading.local):
    current: Clock | None = None


_CLOCKS = _ClockSlot()  # the clock each thread's call runs on, if any


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

    Outside :meth:`Clock.running`, ``operation(timeout)``. When the try's time is up, an
    ``httpcore2`` timeout, recorded on the clock.
    """
    import httpcore2

    clock = _CLOCKS.current
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


# -- openai's errors, in this family's terms ---------------------------------------------
def openai_failure(error: Exception) -> tuple[type[RemoteError], bool, float | None, str]:
    """What an ``openai`` error means: (the :class:`RemoteError` subclass for it, whether
    the retry policy retries it, the pause the server asked for, how the try failed).

    The ``openai`` client is used with ``max_retries=0``: retrying is the policy of
    :mod:`course_lib._support.http_json`, the same for every client of the course.
    """
    import openai

    if isinstance(error, openai.APITimeoutError):  # a subclass of APIConnectionError
        return RemoteTimeout, True, None, "not answering (no complete reply in time)"
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error
        reason = str(cause) or type(cause).__name__
        return (RemoteConnectionError, True, None,
                f"not reachable ({type(cause).__name__}: {reason})")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        return (RemoteHTTPError, is_retried(status), parse_retry_after(error.response.headers),
                f"answered HTTP {status}")
    return RemoteError, False, None, f"{type(error).__name__}: {error}"


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
