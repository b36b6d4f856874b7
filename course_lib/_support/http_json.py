"""Remote services: one family of errors, one retry policy, and a JSON-over-HTTP client.

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

**The retry policy** (:func:`is_retried`, :func:`parse_retry_after`, :func:`retry_wait`),
the same for every client: after HTTP 408, 409, 429 or 5xx, a timeout or a lost
connection, wait and try again, at most ``retries`` more times. The wait is what the
server asks for (``retry-after-ms`` or ``Retry-After``, in seconds or as an HTTP date),
at most ``MAX_RETRY_AFTER`` (60 s: a server asking for an hour gets a minute and another
try); without one, 0.5 s doubling per retry up to 8 s, minus up to 25 % random jitter so
that many clients do not come back in step. Any other 4xx (a bad key, a malformed
request) fails at once: asking again
cannot help. A reply that cannot be read fails at once too.

>>> retry_wait(1, retry_after="2"), retry_wait(1, retry_after="3600")
(2.0, 60.0)
>>> [is_retried(status) for status in (400, 401, 408, 409, 429, 500, 503)]
[False, False, True, True, True, True, True]
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

FIRST_WAIT, MAX_WAIT, MAX_RETRY_AFTER = 0.5, 8.0, 60.0  # seconds
RETRIED_STATUS = (408, 409, 429)  # and every 5xx


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


class _TooSlow(Exception):
    """The reply kept coming, but not all of it within the time allowed."""


def post_json(url: str, payload: Any, *, what: str, headers: dict[str, str] | None = None,
              timeout: float = 30.0, retries: int = 2,
              sleep: Callable[[float], object] = time.sleep) -> Any:
    """POST ``payload`` as JSON to ``url``; return the decoded JSON reply.

    ``what`` names the service in errors ("embedding endpoint"). ``timeout`` (seconds)
    bounds each try twice over: no byte may take longer to come, and the whole reply
    must be in within it (a server that drips one byte at a time is cut off like a
    silent one). Retries follow the module's policy; ``sleep`` does the waiting between
    tries (tests pass one that records). Failures are the :class:`RemoteError` subclass
    of the last try's failure, with ``endpoint=url``.

    >>> post_json("http://127.0.0.1:9/x", {}, what="demo endpoint", retries=0, timeout=1)
    Traceback (most recent call last):
    ...
    course_lib._support.http_json.RemoteConnectionError: demo endpoint http://127.0.0.1:9/x \
failed after 1 try: could not connect (ConnectError)
    """
    import httpx

    where = f"{what} {url}"
    problem, asked, status = "", None, 0
    kind: type[RemoteError] = RemoteError
    for retry in range(retries + 1):
        if retry:
            sleep(retry_wait(retry, asked))
        started = time.monotonic()
        try:
            with httpx.stream("POST", url, json=payload, headers=headers or {},
                              timeout=timeout) as response:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if time.monotonic() - started > timeout:
                        raise _TooSlow
        except (httpx.TimeoutException, _TooSlow) as error:
            kind, asked = RemoteTimeout, None
            problem = (f"no complete reply within timeout={timeout:g} s "
                       f"({type(error).__name__.strip('_')})")
            continue
        except httpx.ConnectError as error:
            kind, asked = RemoteConnectionError, None
            problem = f"could not connect ({type(error).__name__})"
            continue
        except httpx.TransportError as error:  # the connection broke off
            kind, asked = RemoteConnectionError, None
            problem = f"{type(error).__name__}: {error}"
            continue
        status, text = response.status_code, bytes(body).decode("utf-8", "replace")
        if is_retried(status):
            kind, asked = RemoteHTTPError, parse_retry_after(response.headers)
            problem = f"HTTP {status}"
            continue
        if status >= 400:
            raise RemoteHTTPError(f"{where} refused the request (HTTP {status}): {text[:200]}",
                                  url, status)
        try:
            return json.loads(text)
        except ValueError:
            raise MalformedReply(f"{where} replied with something that is not JSON "
                                 f"(HTTP {status}): {text[:120]!r}", url) from None
    tries = f"{retries + 1} {'try' if retries == 0 else 'tries'}"
    message = f"{where} failed after {tries}: {problem}"
    if kind is RemoteHTTPError:
        raise RemoteHTTPError(message, url, status)
    raise kind(message, url)
