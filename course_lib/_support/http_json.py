"""POST a JSON body to an HTTP service and read its JSON reply, with bounded retries.

Shared by the clients that speak to a service over plain HTTP (:class:`~course_lib.rerank.
RerankEndpoint`, :class:`~course_lib.embeddings.HTTPEmbedder`). Every failure is an
:class:`EndpointError` whose message starts with what was called and its address ("rerank
endpoint http://…", "embedding endpoint http://…") and says what went wrong.

The retry policy: after HTTP 429 or 5xx, a timeout or a lost connection, wait
(:func:`retry_wait`: the server's ``Retry-After``, capped at ``MAX_RETRY_AFTER``, else a
jittered doubling), then try again, at most ``retries`` more times. Any other 4xx (a bad
key, a malformed request) fails at once: asking again cannot help. A reply that is not JSON
fails at once too. This is close to the ``openai`` client's policy but not the same: that
client also retries 408 and 409 and reads ``Retry-After`` without this cap.

>>> retry_wait(1, retry_after="2"), retry_wait(1, retry_after="3600")
(2.0, 60.0)
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from typing import Any

FIRST_WAIT, MAX_WAIT, MAX_RETRY_AFTER = 0.5, 8.0, 60.0  # seconds


class EndpointError(RuntimeError):
    """An HTTP service failed or gave a reply that cannot be used; the message names it."""


def retry_wait(retry: int, retry_after: str | None = None) -> float:
    """Seconds to wait before retry number ``retry`` (1, 2, …).

    The server's ``Retry-After`` in seconds, at most ``MAX_RETRY_AFTER`` (a server asking
    for an hour gets a minute and another try); without one (or with an HTTP date, which
    is not read), 0.5 s doubling per retry up to 8 s, minus up to 25 % random jitter so
    that many clients do not come back in step.

    >>> 0.75 <= retry_wait(2) <= 1.0  # 0.5 s · 2, minus up to 25 % jitter
    True
    """
    try:
        asked = float(retry_after) if retry_after is not None else math.nan
    except ValueError:  # an HTTP date: back off as if nothing was asked
        asked = math.nan
    if math.isfinite(asked) and asked >= 0:
        return min(asked, MAX_RETRY_AFTER)
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
    silent one). ``sleep`` does the waiting between tries; tests pass one that records.

    >>> post_json("http://127.0.0.1:9/x", {}, what="demo endpoint", retries=0, timeout=1)
    Traceback (most recent call last):
    ...
    course_lib._support.http_json.EndpointError: demo endpoint http://127.0.0.1:9/x failed after 1 try: \
could not connect (ConnectError)
    """
    import httpx

    where = f"{what} {url}"
    problem, retry_after = "", None
    for retry in range(retries + 1):
        if retry:
            sleep(retry_wait(retry, retry_after))
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
            problem, retry_after = (f"no complete reply within timeout={timeout:g} s "
                                    f"({type(error).__name__.strip('_')})"), None
            continue
        except httpx.ConnectError as error:
            problem, retry_after = f"could not connect ({type(error).__name__})", None
            continue
        except httpx.TransportError as error:  # the connection broke off
            problem, retry_after = f"{type(error).__name__}: {error}", None
            continue
        status, text = response.status_code, bytes(body).decode("utf-8", "replace")
        if status == 429 or status >= 500:
            problem, retry_after = f"HTTP {status}", response.headers.get("retry-after")
            continue
        if status >= 400:
            raise EndpointError(f"{where} refused the request (HTTP {status}): {text[:200]}")
        try:
            return json.loads(text)
        except ValueError:
            raise EndpointError(f"{where} replied with something that is not JSON "
                                f"(HTTP {status}): {text[:120]!r}") from None
    tries = f"{retries + 1} {'try' if retries == 0 else 'tries'}"
    raise EndpointError(f"{where} failed after {tries}: {problem}")
