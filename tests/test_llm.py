import time
from types import SimpleNamespace

import openai._base_client
import pytest
from openai_standin import StandIn

from course_lib import llm as llm_module
from course_lib.llm import LLMError, OfflineLLM, OpenAIChat, Reply, get_llm


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
    return standin


@pytest.fixture()
def chat(server):
    return OpenAIChat("test-model", base_url=server.url, api_key="k", retries=2, timeout=2.0)


@pytest.fixture()
def pauses(monkeypatch):
    """The waits the openai client asks for between tries, recorded instead of slept."""
    recorded = []
    monkeypatch.setattr(openai._base_client, "time",
                        SimpleNamespace(sleep=recorded.append, time=time.time))
    return recorded


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
    # the client's backoff: 0.5 s, then 1 s, each minus up to 25 % jitter
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
    chat = OpenAIChat("m", base_url=server.url, retries=0)
    server.plan = [429]
    with pytest.raises(LLMError, match="failed after 1 try: RateLimitError"):
        chat.chat("x")
    assert len(server.requests) == 1 and pauses == []


def test_a_server_asking_for_a_long_wait_is_not_retried(server, chat, pauses):
    # The client retries only when Retry-After is at most two minutes; the message counts
    # the requests really sent, not the retry budget.
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


def test_configuration_errors():
    with pytest.raises(LLMError, match="COURSE_LLM_BASE_URL"):
        OpenAIChat(base_url=None, model=None)
    with pytest.raises(ValueError, match="retries"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", retries=99)


def test_get_llm_falls_back_offline_with_one_notice(monkeypatch, capsys, server):
    monkeypatch.delenv("COURSE_LLM_BASE_URL", raising=False)
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
