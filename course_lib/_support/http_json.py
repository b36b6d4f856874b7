"""Remote services: one family of errors, one retry policy and the one retry loop.

**Errors.** Every client of a remote service (:class:`~course_lib.llm.OpenAIChat`,
:class:`~course_lib.embeddings.HTTPEmbedder`, :class:`~course_lib.embeddings.OpenAIEmbedder`,
:class:`~course_lib.rerank_models.RerankEndpoint`) fails with a :class:`RemoteError`, whose
``endpoint`` is the URL (or name) it called and whose message names it too. The subclass
says what failed::

    RemoteError (RuntimeError)           .endpoint
    ├── RemoteConnectionError            could not connect, or the connection broke off
    ├── RemoteTimeout                    no complete reply in the time allowed
    ├── RemoteHTTPError                  an HTTP error status (.status), retried or not
    └── MalformedReply (also ValueError) a reply that is not what the protocol says

**The retry policy** (:func:`retrying`, the one retry loop; :func:`is_retried`,
:func:`retry_wait`), the same for every client: after HTTP 408, 409, 429 or 5xx, a
timeout or a lost connection, wait and try again, at most ``retries`` more times (an
integer in [0, 10]). The wait is what the server asks for (``retry-after-ms`` or
``Retry-After``, in seconds or as an HTTP date), at most ``MAX_RETRY_AFTER`` (60 s: a
server asking for an hour gets a minute and another try); without one, 0.5 s doubling
per retry up to 8 s, minus up to 25 % random jitter so that many clients do not come back
in step. Any other 4xx (a bad key, a malformed request) fails at once: asking again
cannot help. A reply that cannot be read fails at once too.

**Time**, the same for every client: ``timeout`` bounds each try — connecting, sending
and the *whole* reply — and ``deadline`` the whole call, every try and every wait
(both seconds in (0, 3600], checked by
:func:`~course_lib._support.validation.check_seconds`). A try is cut at whichever comes
first; a retry whose wait would reach the deadline is not made. The ``openai`` client
runs with ``max_retries=0``: the retries are this loop's, not its own.

>>> retry_wait(1, retry_after="2"), retry_wait(1, retry_after="3600")
(2.0, 60.0)
>>> [is_retried(status) for status in (400, 401, 408, 409, 429, 500, 503)]
[False, False, True, True, True, True, True]
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

FIRST_WAIT, MAX_WAIT, MAX_RETRY_AFTER = 0.5, 8.0, 60.0  # seconds
RETRIED_STATUS = (408, 409, 429)  # and every 5xx
T = TypeVar("T")


class RemoteError(RuntimeError):
    """A remote service failed or gave a reply that cannot be used.

    ``endpoint`` is what was called (its URL, or a name); the message names it too.
    """

    def __init__(self, message: str, endpoint: str | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint


class RemoteConnectionError(RemoteError):
    """The service could not be reached, or the connection broke off during the reply."""


class RemoteTimeout(RemoteError):
    """No complete reply came within the time allowed."""


class RemoteHTTPError(RemoteError):
    """The service answered with an HTTP error status, ``status``."""

    def __init__(self, message: str, endpoint: str | None = None, status: int = 0) -> None:
        super().__init__(message, endpoint)
        self.status = status


class MalformedReply(RemoteError, ValueError):
    """The service answered, but not in the form its protocol promises (also a ValueError,
    which such replies raised before)."""


EndpointError = RemoteError  # the name this module's errors had before


def is_retried(status: int) -> bool:
    """Whether a reply with HTTP ``status`` is worth another try (408, 409, 429, 5xx)."""
    return status in RETRIED_STATUS or status >= 500


def parse_retry_after(headers: Mapping[str, str] | Any) -> float | None:
    """The pause in seconds a reply's headers ask for (``retry-after-ms``, then
    ``Retry-After`` in seconds or as an HTTP date); ``None`` when they ask for none.

    >>> parse_retry_after({"retry-after-ms": "250"}), parse_retry_after({"retry-after": "x"})
    (0.25, None)
    """
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return email.utils.mktime_tz(parsed) - time.time()
    return None


def retry_wait(retry: int, retry_after: float | str | None = None) -> float:
    """Seconds to wait before retry number ``retry`` (1, 2, …).

    ``retry_after`` is the pause the server asked for (seconds, or the text of a
    ``Retry-After`` header); honoured up to ``MAX_RETRY_AFTER``. Without one (or with
    one that cannot be read or is negative), ``FIRST_WAIT`` doubling per retry up to
    ``MAX_WAIT``, minus up to 25 % random jitter.

    >>> 0.75 <= retry_wait(2) <= 1.0  # 0.5 s · 2, minus up to 25 % jitter
    True
    """
    if isinstance(retry_after, str):
        retry_after = parse_retry_after({"retry-after": retry_after})
    if retry_after is not None and math.isfinite(retry_after) and retry_after >= 0:
        return min(float(retry_after), MAX_RETRY_AFTER)
    return min(FIRST_WAIT * 2 ** (retry - 1), MAX_WAIT) * (1 - random.random() / 4)


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
        """The current try ran out of time: record how, and whether the call's deadline
        (not the try's timeout) was what ran out."""
        self.out_of_time = self.try_deadline >= self.deadline
        self.failure = ("not answering (no complete reply before the deadline)"
                        if self.out_of_time else
                        f"not answering (no complete reply within {self.timeout:g} s)")

    @contextmanager
    def running(self) -> Iterator[Clock]:
        """Make this the clock of the calling thread (:func:`current_clock`), for the block."""
        _CLOCKS.current = self
        try:
            yield self
        finally:
            _CLOCKS.current = None


class _ClockSlot(threading.local):
    current: Clock | None = None


_CLOCKS = _ClockSlot()  # the clock each thread's call runs on, if any


def current_clock() -> Clock | None:
    """The clock of the call the calling thread is in (see :meth:`Clock.running`), if any."""
    return _CLOCKS.current


class TryFailed(Exception):
    """One try failed in a way the policy retries. Raised by a try, caught by
    :func:`retrying`: ``kind`` is the :class:`RemoteError` subclass the call fails with if
    no try succeeds, ``problem`` a short account (retry notices, the deadline message),
    ``detail`` the longer one of the final message, ``retry_after`` the pause the server
    asked for, ``status`` the HTTP status."""

    def __init__(self, kind: type[RemoteError], problem: str, *, detail: str | None = None,
                 retry_after: float | None = None, status: int = 0) -> None:
        super().__init__(problem)
        self.kind, self.problem, self.detail = kind, problem, detail or problem
        self.retry_after, self.status = retry_after, status


def retrying(attempt: Callable[[Clock], T], *, where: str, endpoint: str, retries: int,
             timeout: float, deadline: float, who: str,
             sleep: Callable[[float], object] = time.sleep,
             notice: Callable[[str], object] | None = None) -> T:
    """``attempt(clock)``, tried as the policy says: the one retry loop of the course.

    Each try may take ``timeout`` seconds, the whole call (tries and waits) ``deadline``
    seconds: the try's time is on ``clock`` (its ``try_deadline``; while a try runs the
    clock is also :func:`current_clock`). A try that raises :class:`TryFailed` is tried
    again, at most ``retries`` more times, after :func:`retry_wait`; a retry whose wait
    would reach the deadline is not made, nor one after a try the deadline cut. Any other
    exception (a :class:`RemoteError` for what asking again cannot help) ends the call at
    once. ``sleep`` does the waiting; ``notice`` (if given) gets one line per retry. The
    call fails with the last try's ``kind``, its message naming ``where``, counting the
    tries and saying why it stopped; with :class:`RemoteTimeout` when the deadline was what
    ran out, saying to pass a larger ``timeout=`` and ``deadline=`` to ``who``.

    >>> def attempt(clock):
    ...     raise TryFailed(RemoteHTTPError, "HTTP 503", status=503)
    >>> retrying(attempt, where="demo http://x", endpoint="http://x", retries=2, timeout=1,
    ...          deadline=30, who="Demo", sleep=lambda seconds: None)
    Traceback (most recent call last):
    ...
    course_lib._support.http_json.RemoteHTTPError: demo http://x failed after 3 tries: HTTP 503
    """
    clock = Clock(timeout, deadline)
    failed: TryFailed | None = None
    tries, refused = 0, ""
    with clock.running():
        for retry in range(retries + 1):
            if failed is not None:
                wait = retry_wait(retry, failed.retry_after)
                if wait >= clock.left():
                    refused = (f"a retry would wait {wait:.3g} s, past the deadline of "
                               f"{deadline:g} s ({max(clock.left(), 0):.2g} s left)")
                    break
                if notice is not None:
                    notice(f"{failed.problem}, retrying ({retry}/{retries})…")
                sleep(wait)
            clock.start_try()
            tries += 1
            try:
                return attempt(clock)
            except TryFailed as error:
                failed = error
                if clock.out_of_time:
                    break
    assert failed is not None
    counted = f"{tries} {'try' if tries == 1 else 'tries'}"
    if clock.out_of_time or (refused and failed.kind is RemoteTimeout):
        raise RemoteTimeout(
            f"{where} gave no complete reply within the deadline of {deadline:g} s "
            f"({counted}, each allowed timeout={timeout:g} s; last: {failed.problem}"
            f"{'; ' + refused if refused else ''}): check that the server is running, or "
            f"pass larger timeout= and deadline= (seconds) to {who} for a slow server",
            endpoint) from failed.__cause__
    message = (f"{where} failed after {counted}: {failed.detail}"
               f"{'; not retried: ' + refused if refused else ''}")
    if issubclass(failed.kind, RemoteHTTPError):
        raise failed.kind(message, endpoint, failed.status) from failed.__cause__
    raise failed.kind(message, endpoint) from failed.__cause__


def refused(where: str, status: int, text: str, endpoint: str) -> RemoteHTTPError:
    """The error for an HTTP error status the policy does not retry (a 4xx other than
    408, 409 and 429): the service refused the request, and asking again cannot help."""
    return RemoteHTTPError(f"{where} refused the request (HTTP {status}): {text[:200]}",
                           endpoint, status)
