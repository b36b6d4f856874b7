"""LLM access: one small interface, two implementations.

* :class:`OpenAIChat` talks to any OpenAI-compatible chat-completions endpoint
  (OpenAI, Qwen/DashScope, DeepSeek, GLM, a local Ollama or vLLM), configured by
  ``COURSE_LLM_BASE_URL``, ``COURSE_LLM_API_KEY`` and ``COURSE_LLM_MODEL``.
* :class:`OfflineLLM` is the stand-in used when nothing is configured (and in CI):
  classical algorithms (:mod:`course_lib.offline_llm`), not a language model.

Both offer the same course tasks — ``summarize``, ``keywords``, ``qa_pairs``,
``expand_query``, ``sub_questions``, ``query_variants``, ``judge``, ``answer``, ``supported`` — and
every text they return is a :class:`Reply` that says which backend wrote it.

>>> llm = OfflineLLM()
>>> reply = llm.summarize("长城很长。长城在北京。北京有故宫。", max_sentences=1)
>>> str(reply), reply.backend
('长城在北京。', 'offline')
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from . import offline_llm
from ._support.http_json import MalformedReply, RemoteError, retrying
from ._support.transports import check_base_url, deadline_transport, openai_try
from ._support.validation import check_int, check_number, check_seconds
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


LLMError = RemoteError
"""The old name of every failure of the chat model: :class:`OpenAIChat`'s remote failures
(the subclasses of :class:`~course_lib._support.http_json.RemoteError`) and incomplete
settings (a plain ``RemoteError`` whose ``endpoint`` is ``None``)."""


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


class OpenAIChat(ChatLLM):
    """An OpenAI-compatible chat model, with a deadline for each call and bounded retries.

    **Time.** Each call of :meth:`chat` (and of every task built on it) ends within
    ``deadline`` seconds (30 by default), whatever the server does; each try within it
    may take ``timeout`` seconds (20 by default) — connecting, sending the prompt and
    receiving the *whole* reply, not just the wait between two bytes. A server that never
    answers therefore fails after 30 s: one try of 20 s, a pause, a second try cut at the
    deadline. A model that needs longer for a good answer needs larger values:
    ``OpenAIChat(timeout=120, deadline=300)`` (or the same through :func:`get_llm`). How
    the deadline holds: :mod:`course_lib._support.transports`. Proxies set in the
    environment (``HTTPS_PROXY``, ``NO_PROXY``, ...) are used, under the same deadline.

    **Retries** follow the course's one policy, the one retry loop of every remote
    client (:func:`course_lib._support.http_json.retrying`): after HTTP 408, 409, 429 or
    5xx, a timeout or a lost connection, wait and try again, at most ``retries`` more
    times; the wait is what the server asks for (at most 60 s), else 0.5 s doubling up to
    8 s, minus up to 25 % jitter. Any other 4xx, such as a bad key, fails at once. A retry
    is made only if it can start before the deadline: when the wait would reach past it,
    the call fails at once. Each retry prints one line to stderr (unless
    ``notice=False``), e.g. ``LLM at http://localhost:11434/v1 not answering (no complete
    reply within 20 s), retrying (1/3)…``. ``sleep`` does the waiting (tests pass one that
    records).

    What fails in the end is a :class:`~course_lib._support.http_json.RemoteError` (of
    which :class:`LLMError` is the old name) that names the model, the URL, how many tries
    were made and what to change; its subclass says what failed (``RemoteTimeout``,
    ``RemoteConnectionError``, ``RemoteHTTPError``, ``MalformedReply``). Bad arguments fail
    before any request: a URL that is not ``http://`` or ``https://`` with a host is a
    ``ValueError`` naming ``base_url`` (or ``COURSE_LLM_BASE_URL``); a ``timeout`` or
    ``deadline`` that is not a number of seconds in (0, 3600] and ``retries`` outside
    [0, 10] are ``ValueError``. Replies longer than ``max_reply_chars`` are cut.
    """

    backend = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = 3, temperature: float = 0.0, max_reply_chars: int = 20_000,
                 deadline: float = DEFAULT_DEADLINE, notice: bool = True,
                 sleep: Callable[[float], object] = time.sleep) -> None:
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
        self.timeout = check_seconds(timeout, "timeout")
        self.deadline = check_seconds(deadline, "deadline")
        self.retries = check_int(retries, "retries", 0, 10)
        self.temperature = check_number(temperature, "temperature", 0, 2)
        self.max_reply_chars = check_int(max_reply_chars, "max_reply_chars", 1)
        if not isinstance(notice, bool):
            raise TypeError(f"notice must be True or False, got {notice!r}")
        self.notice, self.sleep = notice, sleep
        self.name = f"openai:{self.model}"

        from openai import DefaultHttpx2Client, OpenAI

        # max_retries=0: retrying is the course's one loop (http_json.retrying), not the client's.
        http_client = DefaultHttpx2Client(transport=deadline_transport(self.base_url),
                                          trust_env=False)
        self._client = OpenAI(base_url=self.base_url, api_key=api_key or "not-needed",
                              timeout=self.timeout, max_retries=0, http_client=http_client)

    def chat(self, prompt: str, system: str | None = None) -> Reply:
        """The model's reply to ``prompt`` (after an optional ``system`` message).

        Ends within ``deadline`` seconds, with a reply or a ``RemoteError``.
        """
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")
        if system is not None and not isinstance(system, str):
            raise TypeError(f"system must be a string or None, got {type(system).__name__}")
        messages = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": prompt}]
        where = f"{self.name} at {self.base_url}"
        response = retrying(
            lambda clock: openai_try(lambda: self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature),
                clock, where, self.base_url, "a chat completion"),
            where=where, endpoint=self.base_url, retries=self.retries, timeout=self.timeout,
            deadline=self.deadline, who="OpenAIChat or get_llm", sleep=self.sleep,
            notice=self._notice if self.notice else None)
        return self._reply(clean_reply(self._text(response), self.max_reply_chars))

    def _notice(self, line: str) -> None:
        print(f"LLM at {self.base_url} {line}", file=sys.stderr, flush=True)

    def _text(self, response: Any) -> str:
        """The text of a chat completion, or :class:`MalformedReply`."""
        where = f"{self.name} at {self.base_url}"
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError) as error:
            raise MalformedReply(f"{where} sent a reply that is not a chat completion: "
                                 f"{type(error).__name__}: {error}", self.base_url) from error
        if not isinstance(content, str):
            raise MalformedReply(f"{where}: model {self.model!r} returned no text",
                                 self.base_url)
        return content


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


class OfflineLLM(ChatLLM):
    """The offline stand-in: each task is a classical algorithm, not a language model."""

    backend = "offline"
    name = "offline stand-in (classical algorithms)"

    def __init__(self) -> None:
        # jieba's keyword tables (~45 MB, ~35 MB more while being read) are loaded now,
        # not at the first keyword, when a notebook's memory is usually at its highest.
        offline_llm.tfidf_table()

    def chat(self, prompt: str, system: str | None = None) -> Reply:
        return self._reply("[offline stand-in] No language model is configured, so free chat "
                           "is not available; set COURSE_LLM_BASE_URL and COURSE_LLM_MODEL.")

    def summarize(self, text: str, language: str = "zh", max_sentences: int = 2) -> Reply:
        return self._reply(offline_llm.textrank_summary(text, max_sentences))

    def keywords(self, text: str, language: str = "zh", limit: int = 8) -> list[str]:
        return offline_llm.tfidf_keywords(text, limit)

    def qa_pairs(self, text: str, language: str = "zh") -> list[tuple[str, str]]:
        return offline_llm.question_qa_pairs(text)

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
