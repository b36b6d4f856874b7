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

import os
import sys
from collections.abc import Sequence
from typing import Any

from . import offline_llm
from .llm_parsing import (
    clean_reply,
    parse_judgement,
    parse_keywords,
    parse_numbered_list,
    parse_qa_pairs,
    strip_preamble,
)
from .validation import check_int


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


class OpenAIChat(ChatLLM):
    """An OpenAI-compatible chat model with a timeout and bounded retries.

    Retrying is the ``openai`` client's job (``max_retries=retries``), the same policy as
    :class:`~course_lib.embeddings.OpenAIEmbedder`: after HTTP 408, 409, 429 or 5xx, a
    timeout or a lost connection it waits and tries again, at most ``retries`` more
    times. The wait is what the server asks for in ``Retry-After`` (or ``retry-after-ms``);
    without one, 0.5 s doubling per retry up to 8 s, minus up to 25 % random jitter so
    that many clients do not come back in step. A server asking for more than two minutes
    is not retried, and neither is any other 4xx, such as a bad key. ``timeout`` bounds
    each try, not the whole call.

    What fails in the end is an :class:`LLMError` that says how many tries were made.
    Replies longer than ``max_reply_chars`` are cut.
    """

    backend = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 60.0, retries: int = 3,
                 temperature: float = 0.0, max_reply_chars: int = 20_000) -> None:
        from openai import OpenAI

        self.model = model or os.environ.get("COURSE_LLM_MODEL")
        base_url = base_url or os.environ.get("COURSE_LLM_BASE_URL")
        api_key = api_key or os.environ.get("COURSE_LLM_API_KEY")
        if not self.model or not base_url:
            raise LLMError("OpenAIChat needs a model and a base URL: set COURSE_LLM_MODEL and "
                           "COURSE_LLM_BASE_URL (and COURSE_LLM_API_KEY), or use OfflineLLM()")
        retries = check_int(retries, "retries", 0, 10)
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed",
                              timeout=timeout, max_retries=retries)
        self.retries, self.temperature = retries, temperature
        self.max_reply_chars = max_reply_chars
        self.name = f"openai:{self.model}"

    def chat(self, prompt: str, system: str | None = None) -> Reply:
        import openai

        messages = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": prompt}]
        # One call: the client has already waited and retried when an error reaches us.
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature)
            content = response.choices[0].message.content
            if not isinstance(content, str):
                raise LLMError(f"model {self.model!r} returned no text")
            return self._reply(clean_reply(content, self.max_reply_chars))
        except (openai.RateLimitError, openai.InternalServerError,
                openai.APIConnectionError) as error:  # APITimeoutError is a connection error
            tries = _tries(error)
            raise LLMError(f"{self.name} failed after {tries} {'try' if tries == 1 else 'tries'}"
                           f": {type(error).__name__}: {error}") from error
        except openai.APIStatusError as error:  # 4xx; 408 and 409 only after their retries
            tries = _tries(error)
            after = f" after {tries} tries" if tries > 1 else ""
            raise LLMError(f"{self.name} refused the request (HTTP {error.status_code}){after}: "
                           f"{error.message}") from error
        except (AttributeError, IndexError, TypeError, ValueError) as error:
            raise LLMError(f"{self.name} sent a reply that is not a chat completion: "
                           f"{error}") from error


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


def get_llm(notice: bool = True, **kwargs: Any) -> ChatLLM:
    """The configured chat model, or the offline stand-in (with a one-line notice, once)."""
    if os.environ.get("COURSE_LLM_BASE_URL") and os.environ.get("COURSE_LLM_MODEL"):
        return OpenAIChat(**kwargs)
    if notice and not _NOTICE_SHOWN:
        print("note: no LLM configured (COURSE_LLM_BASE_URL, COURSE_LLM_MODEL); using the "
              "offline stand-in of classical algorithms", file=sys.stderr)
        _NOTICE_SHOWN.append(True)
    return OfflineLLM()
