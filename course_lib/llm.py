"""LLM access: one small interface, two implementations.

* :class:`OpenAIChat` talks to any OpenAI-compatible chat-completions endpoint
  (OpenAI, Qwen/DashScope, DeepSeek, GLM, a local Ollama or vLLM), configured by
  ``COURSE_LLM_BASE_URL``, ``COURSE_LLM_API_KEY`` and ``COURSE_LLM_MODEL``.
* :class:`OfflineLLM` is the stand-in used when nothing is configured (and in CI):
  classical algorithms (:mod:`course_lib.offline_llm`), not a language model.

Both offer the same course tasks — ``summarize``, ``keywords``, ``qa_pairs``,
``expand_query``, ``sub_questions``, ``judge``, ``answer``, ``supported`` — and
every text they return is a :class:`Reply` that says which backend wrote it.

>>> llm = OfflineLLM()
>>> reply = llm.summarize("长城很长。长城在北京。北京有故宫。", max_sentences=1)
>>> str(reply), reply.backend
('长城在北京。', 'offline')
"""

from __future__ import annotations

import email.utils
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from . import offline_llm
from ._support.validation import check_int, check_number, is_number
from .llm_parsing import (
    clean_reply,
    parse_judgement,
    parse_keywords,
    parse_numbered_list,
    parse_qa_pairs,
    strip_preamble,
)


class Reply(str):
    """A string that remembers which backend produced it (``reply.backend``)."""

    backend: str

    def __new__(cls, text: str, backend: str) -> Reply:
        reply = super().__new__(cls, text)
        reply.backend = backend
        return reply


class LLMError(RuntimeError):
    """The model could not be reached or answered in a way that cannot be used."""


PROMPTS = {
    "summary": {"zh": "请用一到两句话概括下面这段文字的主要内容，只输出摘要：\n{text}",
                "en": "Summarise the following text in one or two sentences. Output only the "
                      "summary:\n{text}"},
    "keywords": {"zh": "从下面的文字中提取最多{limit}个关键词，用中文逗号分隔，"
                       "只输出关键词：\n{text}",
                 "en": "Extract at most {limit} keywords from the text, separated by commas. "
                       "Output only the keywords:\n{text}"},
    "qa": {"zh": "根据下面的文字提出几个问题并给出答案，每对写成两行：\n"
                 "Q: 问题\nA: 答案\n文字：\n{text}",
           "en": "Write a few question-answer pairs about the text, each as two lines:\n"
                 "Q: question\nA: answer\nText:\n{text}"},
    "expand": "把下面这个查询改写得更具体、更完整，便于检索，只输出改写后的查询。"
              "{context}\n查询：{query}",
    "sub_questions": "如果下面的问题包含多个方面，把它拆成最多{limit}个具体的子问题，"
                     "每行一个，不要编号以外的内容；如果不需要拆分，原样输出。\n问题：{query}",
    "multi_query": "为下面的问题写出{n}个不同说法的检索问题，意思不变，每行一个，"
                   "用 1. 2. 3. 编号。\n问题：{query}",
    "judge": "问题：{question}\n回答：{answer}\n"
             "这个回答解决了问题吗？只回答 True 或 False。",
    "answer": "根据以下资料回答问题。资料中没有答案时，回答“资料中没有找到答案”。\n"
              "资料：\n{context}\n问题：{question}\n回答：",
    "supported": "资料：\n{context}\n陈述：{statement}\n"
                 "这条陈述能由资料推出吗？只回答 True 或 False。",
}

class ChatLLM:
    """The interface. Subclasses implement :meth:`chat`; the tasks prompt and parse."""

    backend = "base"

    def chat(self, prompt: str, system: str | None = None) -> Reply:
        raise NotImplementedError

    def __call__(self, prompt: str) -> Reply:
        return self.chat(prompt)

    def _reply(self, text: str) -> Reply:
        return Reply(text, self.backend)

    # -- the course's tasks --------------------------------------------------------
    def summarize(self, text: str, language: str = "zh", max_sentences: int = 2) -> Reply:
        return self._reply(strip_preamble(self.chat(PROMPTS["summary"][language].format(
            text=text))))

    def keywords(self, text: str, language: str = "zh", limit: int = 8) -> list[str]:
        return parse_keywords(self.chat(PROMPTS["keywords"][language].format(
            text=text, limit=limit)), limit)

    def qa_pairs(self, text: str, language: str = "zh") -> list[tuple[str, str]]:
        return parse_qa_pairs(self.chat(PROMPTS["qa"][language].format(text=text)))

    def expand_query(self, query: str, context: Sequence[str] = ()) -> Reply:
        hint = ("\n可参考的资料：\n" + "\n".join(context)) if context else ""
        rewritten = parse_numbered_list(self.chat(PROMPTS["expand"].format(
            query=query, context=hint)), limit=1)
        return self._reply(rewritten[0] if rewritten else query)

    def sub_questions(self, query: str, limit: int = 3) -> list[str]:
        questions = parse_numbered_list(self.chat(PROMPTS["sub_questions"].format(
            query=query, limit=limit)), limit=limit)
        return questions or [query]

    def query_variants(self, query: str, n: int = 3, context: Sequence[str] = ()) -> list[str]:
        """``n`` ways to ask ``query`` (the original first), for multi-query retrieval."""
        variants = parse_numbered_list(self.chat(PROMPTS["multi_query"].format(
            query=query, n=n)), limit=n)
        return list(dict.fromkeys([query, *variants]))[:n]

    def judge(self, question: str, answer: str) -> bool | None:
        """Does ``answer`` solve ``question``? ``None`` if the judge's reply is unreadable."""
        return parse_judgement(self.chat(PROMPTS["judge"].format(question=question,
                                                                 answer=answer)))

    def answer(self, question: str, contexts: Sequence[str]) -> Reply:
        context = "\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts))
        return self._reply(clean_reply(self.chat(PROMPTS["answer"].format(
            context=context, question=question))))

    def supported(self, statement: str, contexts: Sequence[str]) -> bool:
        return parse_judgement(self.chat(PROMPTS["supported"].format(
            context="\n".join(contexts), statement=statement))) is True


DEFAULT_TIMEOUT = 20.0
"""Seconds one try of :class:`OpenAIChat` may take: connecting, sending and the whole reply."""
DEFAULT_DEADLINE = 30.0
"""Seconds one call of :meth:`OpenAIChat.chat` may take: every try and every wait between."""
MAX_SECONDS = 3600.0
"""The largest ``timeout`` or ``deadline`` accepted: an hour."""

_URL_EXAMPLE = "e.g. 'https://api.openai.com/v1' or 'http://localhost:11434/v1'"
_RETRIED_STATUS = (408, 409, 429)  # and every 5xx: what the openai client retries
_BACKOFF_START, _BACKOFF_MAX = 0.5, 8.0  # the openai client's waits between tries


class OpenAIChat(ChatLLM):
    """An OpenAI-compatible chat model, with a deadline for each call and bounded retries.

    **Time.** Each call of :meth:`chat` (and of every task built on it) ends within
    ``deadline`` seconds (30 by default), whatever the server does; each try within it
    may take ``timeout`` seconds (20 by default) — connecting, sending the prompt and
    receiving the *whole* reply, not just the wait between two bytes. A server that never
    answers therefore fails after 30 s: one try of 20 s, a pause, a second try cut at the
    deadline. A model that needs longer for a good answer needs larger values:
    ``OpenAIChat(timeout=120, deadline=300)`` (or the same through :func:`get_llm`).

    How the deadline holds: the HTTP connection's network layer (the ``httpcore2`` network
    backend under ``httpx2``, which the ``openai`` client uses) is wrapped so that every
    connect, send and receive waits at most for the time left, of the try and of the
    call. A server that drips one byte every 2 s is cut off like a silent one, and the
    connection is closed, so nothing keeps running after the error. Not bounded: the
    operating system's own name lookup (DNS) for the host. Proxies set in the environment
    (``HTTPS_PROXY``, ``NO_PROXY``, ...) are used, under the same deadline.

    **Retries** are the ``openai`` client's job (``max_retries=retries``), the same
    policy as :class:`~course_lib.embeddings.OpenAIEmbedder`: after HTTP 408, 409, 429 or
    5xx, a timeout or a lost connection it waits and tries again, at most ``retries`` more
    times. The wait is what the server asks for in ``Retry-After`` (or
    ``retry-after-ms``); without one, 0.5 s doubling per retry up to 8 s, minus up to 25 %
    random jitter so that many clients do not come back in step. A server asking for more
    than two minutes is not retried, and neither is any other 4xx, such as a bad key. A
    retry is made only if it can start before the deadline: when the wait would reach
    past it, the call fails at once. Each retry prints one line to stderr (unless
    ``notice=False``), e.g. ``LLM at http://localhost:11434/v1 not answering (no complete
    reply within 20 s), retrying (1/3)…``.

    What fails in the end is an :class:`LLMError` that names the model, the URL, how
    many tries were made and what to change. Bad arguments fail before any request: a
    URL that is not ``http://`` or ``https://`` with a host is a ``ValueError`` naming
    ``base_url`` (or ``COURSE_LLM_BASE_URL``); a ``timeout`` or ``deadline`` that is not
    a number of seconds in (0, 3600] and ``retries`` outside [0, 10] are ``ValueError``.
    Replies longer than ``max_reply_chars`` are cut.
    """

    backend = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = 3, temperature: float = 0.0, max_reply_chars: int = 20_000,
                 deadline: float = DEFAULT_DEADLINE, notice: bool = True) -> None:
        model_name = "model" if model is not None else "COURSE_LLM_MODEL"
        url_name = "base_url" if base_url is not None else "COURSE_LLM_BASE_URL"
        model = model if model is not None else _env("COURSE_LLM_MODEL")
        base_url = base_url if base_url is not None else _env("COURSE_LLM_BASE_URL")
        api_key = api_key if api_key is not None else _env("COURSE_LLM_API_KEY")
        missing = [what for what, value in (("a model (model= or COURSE_LLM_MODEL)", model),
                                            ("a base URL (base_url= or COURSE_LLM_BASE_URL)",
                                             base_url)) if value is None]
        if missing:
            raise LLMError(f"OpenAIChat needs {' and '.join(missing)}: set COURSE_LLM_MODEL "
                           "and COURSE_LLM_BASE_URL (and COURSE_LLM_API_KEY), or use "
                           "OfflineLLM()")
        self.model = _check_name(model, model_name)
        self.base_url = check_base_url(base_url, url_name)
        if api_key is not None and not isinstance(api_key, str):
            raise TypeError(f"api_key must be a string, got {type(api_key).__name__}")
        self.timeout = _check_seconds(timeout, "timeout")
        self.deadline = _check_seconds(deadline, "deadline")
        self.retries = check_int(retries, "retries", 0, 10)
        self.temperature = check_number(temperature, "temperature", 0, 2)
        self.max_reply_chars = check_int(max_reply_chars, "max_reply_chars", 1)
        if not isinstance(notice, bool):
            raise TypeError(f"notice must be True or False, got {notice!r}")
        self.notice = notice
        self.name = f"openai:{self.model}"

        from openai import DefaultHttpx2Client, OpenAI

        # trust_env=False: the proxy is chosen here, so that it too goes through the
        # deadline transport (the client would otherwise open its own for it).
        http_client = DefaultHttpx2Client(transport=_deadline_transport(self.base_url),
                                          trust_env=False)
        self._client = OpenAI(base_url=self.base_url, api_key=api_key or "not-needed",
                              timeout=self.timeout, max_retries=self.retries,
                              http_client=http_client)

    def chat(self, prompt: str, system: str | None = None) -> Reply:
        """The model's reply to ``prompt`` (after an optional ``system`` message).

        Ends within ``deadline`` seconds, with a reply or an :class:`LLMError`.
        """
        import openai

        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")
        if system is not None and not isinstance(system, str):
            raise TypeError(f"system must be a string or None, got {type(system).__name__}")
        messages = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": prompt}]
        call = _Call(self)
        _CALLS.current = call  # what the transport and the network layer go by
        # One call: the client has already waited and retried when an error reaches us.
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature)
            content = response.choices[0].message.content
            if not isinstance(content, str):
                raise LLMError(f"model {self.model!r} returned no text")
            return self._reply(clean_reply(content, self.max_reply_chars))
        except openai.OpenAIError as error:
            raise LLMError(self._failure(error, call)) from error
        except (AttributeError, IndexError, TypeError, ValueError) as error:
            raise LLMError(f"{self.name} sent a reply that is not a chat completion: "
                           f"{error}") from error
        finally:
            _CALLS.current = None

    def _failure(self, error: Exception, call: _Call) -> str:
        """The one-line message of the :class:`LLMError` that ``error`` ends a call with."""
        import openai

        tries = call.tries or _tries(error)
        counted = f"{tries} {'try' if tries == 1 else 'tries'}"
        if call.out_of_time:
            return (f"{self.name} at {self.base_url} gave no complete reply within the "
                    f"deadline of {self.deadline:g} s ({counted}, each allowed timeout="
                    f"{self.timeout:g} s; last: {call.failure}"
                    f"{'; ' + call.refused if call.refused else ''}): check that the server is "
                    "running, or pass larger timeout= and deadline= (seconds) to "
                    "OpenAIChat or get_llm for a slow model")
        refused = f"; not retried: {call.refused}" if call.refused else ""
        if isinstance(error, openai.APITimeoutError):
            return (f"{self.name} failed after {counted}: {type(error).__name__}: {error} "
                    f"(no complete reply from {self.base_url} within timeout="
                    f"{self.timeout:g} s per try; pass a larger timeout= for a slow model)")
        if isinstance(error, (openai.RateLimitError, openai.InternalServerError,
                              openai.APIConnectionError)):
            return (f"{self.name} failed after {counted}: {type(error).__name__}: {error} "
                    f"(LLM at {self.base_url} {call.failure}){refused}")
        if isinstance(error, openai.APIStatusError):  # 4xx; 408 and 409 after their retries
            after = f" after {counted}" if tries > 1 else ""
            return (f"{self.name} refused the request (HTTP {error.status_code}){after}: "
                    f"{error.message}{refused}")
        return f"{self.name} failed: {type(error).__name__}: {error}"


def _tries(error: Exception) -> int:
    """How many requests the ``openai`` client sent before it gave up with ``error``.

    The client numbers its retries in the ``x-stainless-retry-count`` header of every
    request, and an ``openai.APIError`` keeps the last request it sent.
    """
    headers = getattr(getattr(error, "request", None), "headers", {})
    try:
        return int(headers.get("x-stainless-retry-count", "0")) + 1
    except ValueError:
        return 1


# -- checks ----------------------------------------------------------------------------
def _env(name: str) -> str | None:
    """The environment variable ``name`` without surrounding spaces; ``None`` if unset or blank."""
    return os.environ.get(name, "").strip() or None


def _check_name(model: Any, name: str) -> str:
    if not isinstance(model, str):
        raise TypeError(f"{name} must be a model name string, e.g. 'qwen-plus', got "
                        f"{type(model).__name__}")
    if not model.strip():
        raise ValueError(f"{name} is empty: give the model's name, e.g. 'qwen-plus'")
    return model.strip()


def _check_seconds(value: Any, name: str) -> float:
    """``value`` as a float if it is a number of seconds in (0, ``MAX_SECONDS``]."""
    if not is_number(value) or not 0 < value <= MAX_SECONDS:
        raise ValueError(f"{name} must be a number of seconds in (0, {MAX_SECONDS:g}], got "
                         f"{value!r}")
    return float(value)


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
        raise TypeError(f"{name} must be a URL string ({_URL_EXAMPLE}), got "
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
                         f"{_URL_EXAMPLE}; got {url!r}: {problem}")
    return text


# -- the deadline ----------------------------------------------------------------------
class _Call:
    """The clock and record of one :meth:`OpenAIChat.chat` call, in the calling thread.

    The transport starts each try on it; the network layer asks it how long the next
    socket operation may wait; :meth:`OpenAIChat._failure` reads what happened.
    """

    def __init__(self, chat: OpenAIChat) -> None:
        now = time.monotonic()
        self.budget = chat.deadline
        self.deadline = now + chat.deadline   # the whole call
        self.try_deadline = self.deadline     # the current try: min(start + timeout, deadline)
        self.timeout, self.retries = chat.timeout, chat.retries
        self.url, self.notice = chat.base_url, chat.notice
        self.tries = 0
        self.request: Any = None              # the current try's request (for openai errors)
        self.failure = "no reply"             # how the last failed try failed
        self.refused: str | None = None       # why a retry the client wanted was not made
        self.out_of_time = False              # the deadline ended the call

    def begin_try(self, request: Any) -> None:
        """Start a try: print the retry notice, or end the call if its time is up."""
        retry = _retry_count(request, self.tries)
        self.tries += 1
        self.request = request
        now = time.monotonic()
        if retry and now >= self.deadline:
            self.give_up()
        if retry and self.notice:
            print(f"LLM at {self.url} {self.failure}, retrying ({retry}/{self.retries})…",
                  file=sys.stderr, flush=True)
        self.try_deadline = min(now + self.timeout, self.deadline)
        self.failure = "not answering (the connection was lost during the reply)"

    def failed(self, failure: str, wait: float | None = None) -> bool:
        """Record a failed try; ``False`` if the client's retry could not start in time.

        ``wait`` is the pause the server asked for; without one the longest pause the
        client may take before its next try.
        """
        self.failure = failure
        if self.tries > self.retries:
            return True  # no retry left: the client gives up by itself
        if wait is None:
            wait = min(_BACKOFF_START * 2.0 ** (self.tries - 1), _BACKOFF_MAX)
        left = self.deadline - time.monotonic()
        if wait < left:
            return True
        self.refused = (f"a retry would wait {wait:.3g} s, past the deadline of "
                        f"{self.budget:g} s ({max(left, 0):.2g} s left)")
        return False

    def give_up(self) -> None:
        """End the call now with an error the ``openai`` client passes on without retrying."""
        import openai

        self.out_of_time = True
        raise openai.APITimeoutError(request=self.request)

    def timed_out(self) -> None:
        """A socket operation ran out of the try's time: end the call if nothing can follow."""
        cut_by_deadline = self.try_deadline >= self.deadline
        limit = self.timeout if not cut_by_deadline else None
        self.failure = ("not answering (no complete reply within "
                        f"{limit:g} s)" if limit is not None else
                        "not answering (no complete reply before the deadline)")
        if cut_by_deadline or not self.failed(self.failure):
            self.give_up()


class _CallSlot(threading.local):
    current: _Call | None = None


_CALLS = _CallSlot()  # the call each thread is in, if any


def _retry_count(request: Any, default: int) -> int:
    """Which retry ``request`` is (0: the first try), from the ``openai`` client's header."""
    try:
        return int(request.headers.get("x-stainless-retry-count", default))
    except ValueError:
        return default


def _deadline_transport(url: str) -> Any:
    """An ``httpx2`` transport for ``url`` whose every socket operation keeps to the deadline.

    ``httpx2``'s own transport (through the proxy the environment names for ``url``, if
    any), its connection pool given a network backend that cuts each wait to the time
    left, and wrapped in :class:`_DeadlineTransport`. The network backend is set on the
    pool's ``_network_backend``: the one private attribute used, checked here (pinned
    versions: httpx2 and httpcore2 2.16.2, see constraints.txt).
    """
    import httpx2

    transport = httpx2.HTTPTransport(proxy=_environment_proxy(url))
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None or not callable(getattr(backend, "connect_tcp", None)):
        raise RuntimeError("OpenAIChat needs httpx2's HTTPTransport to keep its connection "
                           "pool in ._pool with a ._network_backend, as httpx2 2.16 does: "
                           "install the versions in constraints.txt")
    pool._network_backend = _DeadlineBackend(backend)
    return _DeadlineTransport(transport)


def _environment_proxy(url: str) -> str | None:
    """The proxy that ``*_PROXY`` / ``NO_PROXY`` (or the system's settings) name for ``url``."""
    import urllib.request

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if not proxies or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


class _DeadlineTransport:
    """An ``httpx2`` transport (``handle_request``, ``close``) around another one.

    For a request sent inside :meth:`OpenAIChat.chat` it starts the try's clock (printing
    the retry notice), records how the try failed, ends the call when the ``openai``
    client's next retry could not start before the deadline (for an HTTP error, by the
    ``x-should-retry: false`` header the client obeys), and passes everything else on.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def handle_request(self, request: Any) -> Any:
        call = _CALLS.current
        if call is None:
            return self._inner.handle_request(request)
        call.begin_try(request)
        try:
            response = self._inner.handle_request(request)
        except Exception as error:
            import httpx2

            if isinstance(error, httpx2.TransportError) and not isinstance(
                    error, httpx2.TimeoutException):  # timeouts: recorded by the backend
                reason = str(error) or type(error).__name__
                if not call.failed(f"not reachable ({type(error).__name__}: {reason})"):
                    call.give_up()
            raise
        status = response.status_code
        if status in _RETRIED_STATUS or status >= 500:
            if not call.failed(f"answered HTTP {status}", _retry_after(response.headers)):
                response.headers["x-should-retry"] = "false"
        return response

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _DeadlineTransport:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._inner.__exit__(*exc_info)


def _retry_after(headers: Any) -> float | None:
    """The pause in seconds a response asks for (``retry-after-ms``, ``Retry-After``)."""
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


class _DeadlineBackend:
    """An ``httpcore2`` network backend whose connections keep to the call's deadline."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> _DeadlineStream:
        return _DeadlineStream(_within_deadline(
            lambda left: self._inner.connect_tcp(host, port, left, local_address,
                                                 socket_options), timeout, "connect"))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> _DeadlineStream:
        return _DeadlineStream(_within_deadline(
            lambda left: self._inner.connect_unix_socket(path, left, socket_options),
            timeout, "connect"))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineStream:
    """An ``httpcore2`` network stream whose every wait is cut to the time left."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _within_deadline(lambda left: self._inner.read(max_bytes, left), timeout,
                                "read")

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _within_deadline(lambda left: self._inner.write(buffer, left), timeout, "write")

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> _DeadlineStream:
        return _DeadlineStream(_within_deadline(
            lambda left: self._inner.start_tls(ssl_context, server_hostname, left), timeout,
            "connect"))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _within_deadline(operation: Callable[[float | None], Any], timeout: float | None,
                     kind: str) -> Any:
    """``operation(wait)``, its ``wait`` the smaller of ``timeout`` and the try's time left.

    Outside a :meth:`OpenAIChat.chat` call, ``operation(timeout)``. When the try's time is
    up, an ``httpcore2`` timeout (which the ``openai`` client retries) or, when no retry
    can follow, the error that ends the call.
    """
    import httpcore2

    call = _CALLS.current
    if call is None:
        return operation(timeout)
    errors = {"connect": httpcore2.ConnectTimeout, "read": httpcore2.ReadTimeout,
              "write": httpcore2.WriteTimeout}
    left = call.try_deadline - time.monotonic()
    try:
        if left <= 0:  # a wait of 0 would make the socket non-blocking, not time out
            raise errors[kind](f"no time left for this try ({kind})")
        return operation(left if timeout is None else min(timeout, left))
    except httpcore2.TimeoutException:
        call.timed_out()  # ends the call, or lets the client retry this timeout
        raise


class OfflineLLM(ChatLLM):
    """The offline stand-in: each task is a classical algorithm, not a language model."""

    backend = "offline"
    name = "offline stand-in (classical algorithms)"

    def chat(self, prompt: str, system: str | None = None) -> Reply:
        return self._reply("[offline stand-in] No language model is configured, so free chat "
                           "is not available; set COURSE_LLM_BASE_URL and COURSE_LLM_MODEL.")

    def summarize(self, text: str, language: str = "zh", max_sentences: int = 2) -> Reply:
        return self._reply(offline_llm.textrank_summary(text, max_sentences))

    def keywords(self, text: str, language: str = "zh", limit: int = 8) -> list[str]:
        return offline_llm.tfidf_keywords(text, limit)

    def qa_pairs(self, text: str, language: str = "zh") -> list[tuple[str, str]]:
        return offline_llm.cloze_qa_pairs(text)

    def expand_query(self, query: str, context: Sequence[str] = ()) -> Reply:
        return self._reply(offline_llm.expand_with_keywords(query, context))

    def sub_questions(self, query: str, limit: int = 3) -> list[str]:
        return offline_llm.split_sub_questions(query, limit)

    def query_variants(self, query: str, n: int = 3, context: Sequence[str] = ()) -> list[str]:
        """The query, its content words alone, and its keyword expansion from ``context``."""
        variants = [query, " ".join(offline_llm.content_terms(query)),
                    offline_llm.expand_with_keywords(query, context)]
        return [v for v in dict.fromkeys(variants) if v.strip()][:n]

    def judge(self, question: str, answer: str) -> bool | None:
        return offline_llm.judge_by_overlap(question, answer)

    def answer(self, question: str, contexts: Sequence[str]) -> Reply:
        sentence = offline_llm.extractive_answer(question, contexts)
        return self._reply(sentence or "资料中没有找到答案")

    def supported(self, statement: str, contexts: Sequence[str]) -> bool:
        return offline_llm.statement_supported(statement, contexts)


_NOTICE_SHOWN: list[bool] = []

_SETTINGS = ("COURSE_LLM_BASE_URL", "COURSE_LLM_MODEL", "COURSE_LLM_API_KEY")


def get_llm(notice: bool = True, **kwargs: Any) -> ChatLLM:
    """The configured chat model, or the offline stand-in (with a one-line notice, once).

    The model is configured by ``COURSE_LLM_BASE_URL`` and ``COURSE_LLM_MODEL`` (and
    ``COURSE_LLM_API_KEY`` where the server needs a key), or by the same ``base_url=``,
    ``model=`` and ``api_key=`` arguments, which win; other ``kwargs`` go to
    :class:`OpenAIChat` (``timeout``, ``deadline``, ``retries``, ...). With none of them
    set, the answer is :class:`OfflineLLM`. A partial configuration — say a URL and a key
    but no model — is an :class:`LLMError` that names what is missing and what is set,
    not a silent fall-back; a malformed URL is a ``ValueError`` (see :func:`check_base_url`).
    ``notice=False`` silences the offline notice and the retry notices.
    """
    given = {"COURSE_LLM_BASE_URL": kwargs.get("base_url"), "COURSE_LLM_MODEL":
             kwargs.get("model"), "COURSE_LLM_API_KEY": kwargs.get("api_key")}
    present = [name for name in _SETTINGS if given[name] is not None or _env(name)]
    if "COURSE_LLM_BASE_URL" in present and "COURSE_LLM_MODEL" in present:
        return OpenAIChat(notice=notice, **kwargs)
    if present:
        missing = [name for name in _SETTINGS[:2] if name not in present]
        are = "is" if len(missing) == 1 else "are"
        raise LLMError(f"LLM configuration incomplete: {' and '.join(missing)} {are} not set "
                       f"(set: {', '.join(present)}). Set {' and '.join(missing)} too (e.g. "
                       "COURSE_LLM_MODEL=qwen-plus, COURSE_LLM_BASE_URL=https://…/v1) to use "
                       f"the LLM, or unset {', '.join(present)} to use the offline stand-in")
    if notice and not _NOTICE_SHOWN:
        print("note: no LLM configured (COURSE_LLM_BASE_URL, COURSE_LLM_MODEL); using the "
              "offline stand-in of classical algorithms", file=sys.stderr)
        _NOTICE_SHOWN.append(True)
    return OfflineLLM()
