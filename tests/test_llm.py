import re
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openai._base_client
import pytest
from bad_inputs import (
    HANG_MARGIN,
    NOWHERE,
    SECONDS,
    Case,
    clear_error_test,
    llm_server,
)
from openai_standin import StandIn

from course_lib import llm as llm_module
from course_lib._support import transports
from course_lib.llm import LLMError, OfflineLLM, OpenAIChat, Reply, check_base_url, get_llm

SETTINGS = ("COURSE_LLM_BASE_URL", "COURSE_LLM_MODEL", "COURSE_LLM_API_KEY")


@pytest.fixture(scope="module")
def shared_standin():
    standin = StandIn()  # one server for the module: each close() waits up to 0.5 s
    yield standin
    standin.close()


@pytest.fixture()
def server(shared_standin):
    """The shared stand-in, its script and record emptied for this test."""
    standin = shared_standin
    standin.plan, standin.replies, standin.requests = [], [], []
    standin.malformed, standin.delay, standin.error_headers = False, 0.0, {}
    standin.drip = 0.0
    return standin


@pytest.fixture(scope="module")
def silent():
    """A stand-in that answers only after 5 s: to every test here, a server that never does."""
    standin = StandIn()
    standin.delay = 5.0
    yield standin
    standin.close()


@pytest.fixture(scope="module")
def dripping():
    """A stand-in that sends its answer (status line, headers, body) a byte per 0.1 s."""
    standin = StandIn()
    standin.drip = 0.1
    yield standin
    standin.close()


@pytest.fixture()
def no_settings(monkeypatch):
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def failing_call(chat):
    """The LLMError ``chat.chat`` ends with, and the seconds it took."""
    start = time.monotonic()
    with pytest.raises(LLMError) as raised:
        chat.chat("x")
    return str(raised.value), time.monotonic() - start


@pytest.fixture()
def pauses(monkeypatch):
    """The waits between tries, recorded instead of slept (pass ``sleep=pauses.append``);
    and the openai client's own sleep made to fail, so that a retry of its own shows."""
    def not_the_course_policy(seconds):
        raise AssertionError(f"the openai client itself slept {seconds} s")
    monkeypatch.setattr(openai._base_client, "time",
                        SimpleNamespace(sleep=not_the_course_policy, time=time.time))
    return []


@pytest.fixture()
def chat(server, pauses):
    return OpenAIChat("test-model", base_url=server.url, api_key="k", retries=2, timeout=2.0,
                      sleep=pauses.append)


def test_chat_round_trip_with_the_real_client(server, chat):
    server.replies = ["你好"]
    reply = chat.chat("说你好", system="be brief")
    assert reply == "你好" and reply.backend == "openai"
    path, body = server.requests[-1]
    assert path.endswith("/chat/completions") and body["model"] == "test-model"
    assert body["messages"][0] == {"role": "system", "content": "be brief"}


def test_retries_on_429_and_500_with_growing_jittered_pauses(server, chat, pauses):
    server.plan = [429, 500]
    assert chat.chat("x") == "ok"
    assert len(server.requests) == 3
    # the course's back-off: 0.5 s, then 1 s, each minus up to 25 % jitter
    assert len(pauses) == 2
    assert 0.375 <= pauses[0] <= 0.5 and 0.75 <= pauses[1] <= 1.0


def test_the_pause_is_what_retry_after_asks_for(server, chat, pauses):
    server.error_headers = {"Retry-After": "7"}
    server.plan = [429, 503]
    assert chat.chat("x") == "ok"
    assert len(server.requests) == 3 and pauses == [7.0, 7.0]


def test_gives_up_after_the_retry_budget(server, chat, pauses):
    server.plan = [503, 503, 503]
    with pytest.raises(LLMError, match="failed after 3 tries: InternalServerError"):
        chat.chat("x")
    assert len(server.requests) == 3 and len(pauses) == 2


def test_no_retries_fails_at_once(server, pauses):
    chat = OpenAIChat("m", base_url=server.url, retries=0, sleep=pauses.append)
    server.plan = [429]
    with pytest.raises(LLMError, match="failed after 1 try: RateLimitError"):
        chat.chat("x")
    assert len(server.requests) == 1 and pauses == []


def test_a_server_asking_for_a_long_wait_is_not_retried(server, chat, pauses):
    # Retry-After: 600 is honoured up to 60 s, still past the default deadline of 30 s:
    # not retried. The message counts the requests really sent, not the retry budget.
    server.error_headers = {"Retry-After": "600"}
    server.plan = [429]
    with pytest.raises(LLMError, match="failed after 1 try"):
        chat.chat("x")
    assert len(server.requests) == 1 and pauses == []


def test_client_errors_are_not_retried(server, chat, pauses):
    server.plan = [401]
    with pytest.raises(LLMError, match=r"refused the request \(HTTP 401\): .*scripted"):
        chat.chat("x")
    assert len(server.requests) == 1 and pauses == []


def test_timeout_is_bounded():
    server = StandIn()  # its own: the late answer must not take the next test's script
    try:
        slow = OpenAIChat("m", base_url=server.url, retries=0, timeout=0.3)
        server.delay = 1.0
        with pytest.raises(LLMError, match="failed after 1 try: APITimeoutError"):
            slow.chat("x")
    finally:
        server.close()


def test_malformed_reply_is_a_clear_error(server, chat):
    server.malformed = True
    with pytest.raises(LLMError, match="not a chat completion"):
        chat.chat("x")


def test_huge_replies_are_cut(server):
    chat = OpenAIChat("m", base_url=server.url, max_reply_chars=100)
    server.replies = ["长" * 10_000]
    assert len(chat.chat("x")) == 100


def test_tasks_parse_messy_model_output(server, chat):
    server.replies = ["好的，以下是关键词：\n1. 长城\n2. 山海关、嘉峪关"]
    assert chat.keywords("…") == ["长城", "山海关", "嘉峪关"]
    server.replies = ["以下是问答：\nQ：长城东起哪里？\nA：山海关\nQ: 西至哪里？\nA: 嘉峪关"]
    assert chat.qa_pairs("…") == [("长城东起哪里？", "山海关"), ("西至哪里？", "嘉峪关")]
    server.replies = ["False"]
    assert chat.judge("q", "a") is False
    server.replies = ["这个嘛……"]
    assert chat.judge("q", "a") is None
    server.replies = ["1. 长城在哪里？\n2. 故宫在哪里？\n3. 颐和园在哪里？\n4. 多余"]
    assert len(chat.sub_questions("…")) == 3
    server.replies = [""]
    assert chat.sub_questions("原问题") == ["原问题"]  # empty reply: keep the question
    server.replies = ["摘要：长城是古代的防御工程。"]
    assert chat.summarize("…") == "长城是古代的防御工程。"


def test_configuration_errors(no_settings):
    with pytest.raises(LLMError, match="COURSE_LLM_BASE_URL"):
        OpenAIChat(base_url=None, model=None)
    with pytest.raises(ValueError, match="retries"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", retries=99)


def test_get_llm_falls_back_offline_with_one_notice(no_settings, capsys, server):
    monkeypatch = no_settings
    monkeypatch.setattr(llm_module, "_NOTICE_SHOWN", [])
    assert isinstance(get_llm(), OfflineLLM) and isinstance(get_llm(), OfflineLLM)
    assert capsys.readouterr().err.count("offline stand-in") == 1
    monkeypatch.setenv("COURSE_LLM_BASE_URL", server.url)
    monkeypatch.setenv("COURSE_LLM_MODEL", "m")
    assert isinstance(get_llm(), OpenAIChat)


def test_offline_llm_labels_everything_and_never_crashes():
    llm = OfflineLLM()
    text = "长城是中国古代的军事防御工程。长城东起山海关，西至嘉峪关。现存城墙大多修建于明朝。"
    assert llm.summarize(text, max_sentences=1).backend == "offline"
    assert "长城" in llm.keywords(text)
    assert llm.qa_pairs(text)
    assert "not available" in llm.chat("写一首诗") and llm.chat("x").backend == "offline"
    assert llm.answer("长城东起哪里？", [text]) == "长城东起山海关，西至嘉峪关。"
    assert llm.answer("长城东起哪里？", []) == "资料中没有找到答案"
    assert llm.judge("长城东起哪里？", "长城东起山海关") is True
    assert llm.judge("长城东起哪里？", "") is False
    assert llm.supported("长城东起山海关", [text]) and not llm.supported("长城在南京", [text])
    assert isinstance(Reply("x", "offline"), str)


# -- deadlines: a bound on a hang, not a speed test ----------------------------------------
# Each bound below is the deadline plus a margin of 1.5 s: without the deadline the call
# would run for as long as the server drips (tens of seconds) or the 5 s of `silent`.
MARGIN = 1.5


def test_a_slow_drip_is_cut_off_by_the_timeout_of_the_try(dripping):
    # A byte every 0.1 s never trips a per-read timeout of 1 s; the try's timeout holds.
    chat = OpenAIChat("m", base_url=dripping.url, timeout=1.0, retries=0)
    message, seconds = failing_call(chat)
    assert seconds < 1.0 + MARGIN
    assert re.search(r"failed after 1 try: APITimeoutError.*within timeout=1 s per try", message)


def test_the_deadline_covers_every_try_and_every_wait(silent, capsys):
    chat = OpenAIChat("m", base_url=silent.url, timeout=0.3, deadline=1.5, retries=3)
    message, seconds = failing_call(chat)
    assert seconds < 1.5 + MARGIN
    assert f"at {silent.url} gave no complete reply within the deadline of 1.5 s" in message
    assert "timeout=0.3 s" in message and "deadline=" in message
    # one notice per retry made, and the tries counted in the message
    tries = int(re.search(r"\((\d+) tries", message).group(1))
    notices = capsys.readouterr().err.splitlines()
    assert len(notices) == tries - 1 >= 1
    assert notices[0] == (f"LLM at {silent.url} not answering (no complete reply within "
                          "0.3 s), retrying (1/3)…")


def test_a_drip_is_cut_off_by_the_deadline_when_the_timeout_is_longer(dripping):
    chat = OpenAIChat("m", base_url=dripping.url, timeout=60, deadline=0.8, retries=3)
    message, seconds = failing_call(chat)
    assert seconds < 0.8 + MARGIN
    assert "within the deadline of 0.8 s (1 try" in message


def test_retry_notices_name_the_url_the_failure_and_the_count(server, chat, pauses, capsys):
    server.plan = [503, 429]
    assert chat.chat("x") == "ok"
    assert capsys.readouterr().err.splitlines() == [
        f"LLM at {server.url} answered HTTP 503, retrying (1/2)…",
        f"LLM at {server.url} answered HTTP 429, retrying (2/2)…"]


def test_no_notice_when_asked_for_none(server, pauses, capsys):
    chat = OpenAIChat("m", base_url=server.url, retries=2, notice=False, sleep=pauses.append)
    server.plan = [503]
    assert chat.chat("x") == "ok"
    assert capsys.readouterr().err == ""


def test_a_connection_refused_is_retried_with_a_notice_and_named(pauses, capsys):
    chat = OpenAIChat("m", base_url="http://127.0.0.1:9/v1", retries=1, sleep=pauses.append)
    message, _ = failing_call(chat)
    assert "m at http://127.0.0.1:9/v1 failed after 2 tries: APIConnectionError" in message
    assert "(not reachable (ConnectError" in message
    assert "retrying (1/1)…" in capsys.readouterr().err


def test_a_wait_past_the_deadline_is_not_taken(server, pauses):
    # Retry-After: 50 is within what the policy honours (60 s), but not within a
    # deadline of 5 s: the call fails at once instead of sleeping 50 s.
    chat = OpenAIChat("m", base_url=server.url, deadline=5, sleep=pauses.append)
    server.error_headers = {"Retry-After": "50"}
    server.plan = [503]
    message, seconds = failing_call(chat)
    assert len(server.requests) == 1 and pauses == []
    assert "not retried: a retry would wait 50 s, past the deadline of 5 s" in message


def test_the_deadline_holds_through_a_proxy_from_the_environment(silent, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", silent.url.removesuffix("/v1"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    chat = OpenAIChat("m", base_url="http://llm.invalid/v1", timeout=0.5, deadline=0.8,
                      retries=0)
    before = len(silent.requests)
    message, seconds = failing_call(chat)
    assert seconds < 0.8 + MARGIN and len(silent.requests) == before + 1
    assert silent.requests[-1][0] == "http://llm.invalid/v1/chat/completions"  # via the proxy


def test_the_network_layer_is_wrapped_on_the_pinned_httpx2():
    # The one private attribute the deadline relies on (httpx2 2.16's pool backend).
    transport = transports.deadline_transport("http://127.0.0.1:9/v1")
    assert isinstance(transport._pool._network_backend, transports.DeadlineBackend)


def test_outside_a_call_the_network_layer_changes_nothing(server):
    import httpx2

    with httpx2.Client(transport=transports.deadline_transport(server.url)) as client:
        response = client.post(f"{server.url}/chat/completions",
                               json={"model": "m", "messages": []})
    assert response.json()["choices"][0]["message"]["content"] == "ok"


# -- configuration ----------------------------------------------------------------------
@pytest.mark.parametrize("present, missing", [
    (("COURSE_LLM_BASE_URL", "COURSE_LLM_API_KEY"), "COURSE_LLM_MODEL is not set"),
    (("COURSE_LLM_MODEL", "COURSE_LLM_API_KEY"), "COURSE_LLM_BASE_URL is not set"),
    (("COURSE_LLM_BASE_URL",), "COURSE_LLM_MODEL is not set"),
    (("COURSE_LLM_API_KEY",), "COURSE_LLM_BASE_URL and COURSE_LLM_MODEL are not set"),
])
def test_a_partial_configuration_names_what_is_missing(no_settings, present, missing):
    values = {"COURSE_LLM_BASE_URL": "http://127.0.0.1:9/v1", "COURSE_LLM_MODEL": "m",
              "COURSE_LLM_API_KEY": "k"}
    for name in present:
        no_settings.setenv(name, values[name])
    with pytest.raises(LLMError) as raised:
        get_llm()
    message = str(raised.value)
    assert missing in message and f"(set: {', '.join(present)})" in message
    assert "offline stand-in" in message  # the other way out


def test_blank_settings_count_as_unset_and_arguments_complete_them(no_settings, capsys):
    no_settings.setenv("COURSE_LLM_MODEL", "  ")
    assert isinstance(get_llm(notice=False), OfflineLLM)
    no_settings.setenv("COURSE_LLM_BASE_URL", " http://127.0.0.1:9/v1 ")
    llm = get_llm(model="m", notice=False)
    assert isinstance(llm, OpenAIChat) and llm.base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("url, problem", [
    ("htp//127.0.0.1:8000/v1", "does not start with http:// or https://"),
    ("localhost:11434/v1", "does not start with http:// or https://"),
    ("htp://127.0.0.1:8000/v1", "scheme 'htp' is not http or https"),
    ("http:///v1", "no host name"),
    ("http://127.0.0.1:80a/v1", "Port could not be cast"),
    ("http://exa mple.com/v1", "contains a space"),
    ("", "is empty"),
    ("https://api.openai.com/v1/chat/completions", "the client adds itself"),
])
def test_a_malformed_url_is_refused_before_any_request(no_settings, url, problem):
    with pytest.raises(ValueError) as raised:
        OpenAIChat("m", base_url=url)
    message = str(raised.value)
    assert message.startswith("base_url must be an http:// or https:// URL with a host, e.g.")
    assert repr(url) in message and problem in message
    no_settings.setenv("COURSE_LLM_BASE_URL", url or " ")
    no_settings.setenv("COURSE_LLM_MODEL", "m")
    if url:
        with pytest.raises(ValueError, match=f"COURSE_LLM_BASE_URL must be .*{re.escape(problem)}"):
            get_llm()


def test_valid_urls_pass_the_check():
    for url in ("http://localhost:11434/v1", "https://api.deepseek.com/v1",
                "https://dashscope.aliyuncs.com/compatible-mode/v1", "http://[::1]:8000/v1"):
        assert check_base_url(url) == url


@pytest.mark.parametrize("argument, value", [
    ("timeout", -1), ("timeout", 0), ("timeout", float("nan")), ("timeout", float("inf")),
    ("timeout", "5"), ("deadline", -1.0), ("deadline", None), ("deadline", True),
])
def test_bad_seconds_are_refused(argument, value):
    with pytest.raises(ValueError, match=rf"{argument} must be a number of seconds in \(0, 3600\]"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", **{argument: value})


def test_the_offline_qa_pairs_are_questions_whose_answer_the_sentence_holds():
    from course_lib.offline_llm import question_qa_pairs

    text = ("2008年夏季奥林匹克运动会于8月8日在北京开幕。本届奥运会上，中国代表团获得48枚金牌。"
            "主体育场由赫尔佐格和德梅隆设计。")
    pairs = question_qa_pairs(text)
    assert pairs == [("2008年夏季奥林匹克运动会于哪一天在北京开幕？", "8月8日"),
                     ("本届奥运会上，中国代表团获得多少枚金牌？", "48"),
                     ("主体育场由谁和德梅隆设计？", "赫尔佐格")]
    for question, answer in pairs:  # a question, not a blank; its answer is gone from it
        assert question.endswith("？") and "____" not in question and answer not in question
    # a place that opens the sentence is its topic: the question asks about another
    assert question_qa_pairs("长城东起山海关。") == [("长城东起哪里？", "山海关")]


# ==================================================================== bad inputs
# A chat call ends within its deadline against a silent or a dripping server; partial
# settings name the missing variable; a malformed URL or a bad number fails before any
# request. The hang cases assert a bound (deadline + margin) inside their call: a bound
# on a hang, not a speed test. Without the deadline the drip runs for ~30 s.

_LLM_SETTINGS = ("COURSE_LLM_BASE_URL", "COURSE_LLM_MODEL", "COURSE_LLM_API_KEY")


def _hang(behaviour: str, bound: float, **options: Any) -> Callable[[Path], Any]:
    """A chat call on the ``behaviour`` server that must fail within ``bound`` seconds."""
    def call(tmp_path: Path) -> None:
        chat = OpenAIChat("m", base_url=llm_server(behaviour).url, **options)
        start = time.monotonic()
        try:
            chat.chat("x")
        finally:
            elapsed = time.monotonic() - start
            assert elapsed < bound + HANG_MARGIN, f"not cut off after {elapsed:.1f} s"
    return call


def _settings(call: Callable[[], Any], **settings: str) -> Callable[[Path], Any]:
    """``call()`` with exactly these COURSE_LLM_* variables set."""
    def run(tmp_path: Path) -> Any:
        with pytest.MonkeyPatch.context() as patch:
            for name in _LLM_SETTINGS:
                patch.delenv(name, raising=False)
            for name, value in settings.items():
                patch.setenv(name, value)
            return call()
    return run


def _chat(**options: Any) -> Callable[[Path], Any]:
    return lambda tmp_path: OpenAIChat(**{"model": "m", "base_url": NOWHERE, **options})


def _bad_url(name: str, url: Any, problem: str) -> Case:
    return Case("llm", f"base-url-{name}", _chat(base_url=url), ValueError,
                r"base_url must be an http:// or https:// URL with a host, e\.g\. "
                rf"'https://api\.openai\.com/v1'.*; got {re.escape(repr(url))}: .*{problem}")


_LLM_TOO_SLOW = r"pass larger timeout= and deadline= \(seconds\) to OpenAIChat or get_llm"


LLM_CASES: list[Case] = [
    # Hangs: a per-read timeout never trips on a drip; the try's timeout and the deadline do.
    Case("llm", "drip-cut-off-by-timeout", _hang("drip", 0.5, timeout=0.5, retries=0),
         LLMError, r"failed after 1 try: APITimeoutError.*within timeout=0\.5 s per try; "
                   r"pass a larger timeout="),
    Case("llm", "drip-cut-off-by-deadline", _hang("drip", 0.6, timeout=30, deadline=0.6),
         LLMError, r"no complete reply within the deadline of 0\.6 s \(1 try.*" + _LLM_TOO_SLOW),
    Case("llm", "silent-cut-off-by-deadline-over-retries",
         _hang("silent", 1.2, timeout=0.2, deadline=1.2, retries=3),
         LLMError, r"deadline of 1\.2 s \(\d tries, each allowed timeout=0\.2 s.*" + _LLM_TOO_SLOW),
    Case("llm", "silent-cut-off-by-timeout", _hang("silent", 0.4, timeout=0.4, retries=0),
         LLMError, r"APITimeoutError.*within timeout=0\.4 s per try; pass a larger timeout="),
    # Partial settings: name what is missing, what is set, and both ways out.
    Case("llm", "settings-url-and-key-no-model",
         _settings(get_llm, COURSE_LLM_BASE_URL=NOWHERE, COURSE_LLM_API_KEY="k"), LLMError,
         r"COURSE_LLM_MODEL is not set \(set: COURSE_LLM_BASE_URL, COURSE_LLM_API_KEY\)\. "
         r"Set COURSE_LLM_MODEL too .*or unset .* to use the offline stand-in"),
    Case("llm", "settings-model-and-key-no-url",
         _settings(get_llm, COURSE_LLM_MODEL="m", COURSE_LLM_API_KEY="k"), LLMError,
         r"COURSE_LLM_BASE_URL is not set \(set: COURSE_LLM_MODEL, COURSE_LLM_API_KEY\)\. "
         r"Set COURSE_LLM_BASE_URL too"),
    Case("llm", "settings-url-only", _settings(get_llm, COURSE_LLM_BASE_URL=NOWHERE),
         LLMError, r"COURSE_LLM_MODEL is not set \(set: COURSE_LLM_BASE_URL\)\. Set "
                   r"COURSE_LLM_MODEL too \(e\.g\. COURSE_LLM_MODEL=qwen-plus"),
    Case("llm", "settings-key-only", _settings(get_llm, COURSE_LLM_API_KEY="k"), LLMError,
         r"COURSE_LLM_BASE_URL and COURSE_LLM_MODEL are not set \(set: COURSE_LLM_API_KEY\).*"
         r"or unset COURSE_LLM_API_KEY to use the offline stand-in"),
    Case("llm", "settings-model-argument-no-url", _settings(lambda: get_llm(model="m")),
         LLMError, r"COURSE_LLM_BASE_URL is not set \(set: COURSE_LLM_MODEL\)"),
    Case("llm", "settings-no-url-for-openaichat",
         _settings(lambda: OpenAIChat("m"), COURSE_LLM_API_KEY="k"), LLMError,
         r"OpenAIChat needs a base URL \(base_url= or COURSE_LLM_BASE_URL\): set "),
    Case("llm", "settings-malformed-url",
         _settings(get_llm, COURSE_LLM_BASE_URL="htp//127.0.0.1:8000/v1", COURSE_LLM_MODEL="m"),
         ValueError, r"COURSE_LLM_BASE_URL must be an http:// or https:// URL with a host, "
                     r"e\.g\. .*got 'htp//127\.0\.0\.1:8000/v1': it does not start with http://"),
    # Malformed URLs, refused before any request (was: 8 s of retries, "Connection error.").
    _bad_url("no-scheme", "htp//127.0.0.1:8000/v1", "does not start with http:// or https://"),
    _bad_url("host-and-port-only", "localhost:11434/v1", "does not start with http:// or https://"),
    _bad_url("scheme-htp", "htp://127.0.0.1:8000/v1", "scheme 'htp' is not http or https"),
    _bad_url("no-host", "http:///v1", "no host name"),
    _bad_url("port-not-a-number", "http://127.0.0.1:80a/v1", "Port could not be cast"),
    _bad_url("space", "http://exa mple.com/v1", "contains a space"),
    _bad_url("endpoint-path",
             "https://api.openai.com/v1/chat/completions", "which the client adds itself"),
    Case("llm", "base-url-not-a-string", _chat(base_url=8000), TypeError,
         r"base_url must be a URL string \(e\.g\. 'https://api\.openai\.com/v1'.*\), got int"),
    # Numbers: seconds in (0, 3600], retries in [0, 10].
    Case("llm", "timeout-negative", _chat(timeout=-1), ValueError, "timeout" + SECONDS + "-1"),
    Case("llm", "timeout-nan", _chat(timeout=float("nan")), ValueError,
         "timeout" + SECONDS + "nan"),
    Case("llm", "timeout-string", _chat(timeout="5"), ValueError, "timeout" + SECONDS + "'5'"),
    Case("llm", "timeout-infinite", _chat(timeout=float("inf")), ValueError,
         "timeout" + SECONDS + "inf"),
    Case("llm", "deadline-zero", _chat(deadline=0), ValueError, "deadline" + SECONDS + "0"),
    Case("llm", "retries-negative", _chat(retries=-1), ValueError,
         r"retries must be an integer in \[0, 10\], got -1"),
    Case("llm", "retries-float", _chat(retries=2.5), ValueError,
         r"retries must be an integer in \[0, 10\], got 2\.5"),
    Case("llm", "retries-string", _chat(retries="3"), ValueError,
         r"retries must be an integer in \[0, 10\], got '3'"),
    Case("llm", "temperature-nan", _chat(temperature=float("nan")), ValueError,
         r"temperature must be a number in \[0, 2\], got nan"),
    Case("llm", "model-empty", _chat(model=" "), ValueError,
         r"model is empty: give the model's name, e\.g\. 'qwen-plus'"),
    Case("llm", "prompt-not-a-string", lambda tmp_path: OpenAIChat(
         "m", base_url=NOWHERE).chat(["长城"]), TypeError, r"prompt must be a string, got list"),
]


test_bad_input_gets_a_clear_error = clear_error_test(LLM_CASES)
