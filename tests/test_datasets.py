import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from course_lib import datasets
from course_lib.datasets import (
    DatasetUnavailableError,
    build_knowledge_base,
    fetch,
    load_sample,
    load_squad,
)

PAYLOAD = b'{"data": []}'


@pytest.fixture()
def server():
    """A local HTTP server on 127.0.0.1 serving PAYLOAD at /good.json."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path == "/good.json":
                self.send_response(200)
                self.send_header("Content-Length", str(len(PAYLOAD)))
                self.end_headers()
                self.wfile.write(PAYLOAD)
            else:
                self.send_error(404)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture()
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(datasets.MIRROR_ENV, raising=False)
    return tmp_path / "cache"


def spec(url, payload=PAYLOAD):
    return {"name": "x/file.json", "url": url, "sha256": hashlib.sha256(payload).hexdigest()}


def test_download_verifies_and_caches(server, isolated):
    path = fetch(spec(f"{server}/good.json"))
    assert path == isolated / "x" / "file.json" and path.read_bytes() == PAYLOAD
    # Second call is served from the cache, even with the server unreachable.
    assert fetch(spec("http://127.0.0.1:9/none")) == path
    assert list(path.parent.iterdir()) == [path]


def test_checksum_mismatch_leaves_no_file(server, isolated):
    with pytest.raises(DatasetUnavailableError, match="SHA-256"):
        fetch(spec(f"{server}/good.json", payload=b"other"))
    assert not any(isolated.rglob("*.*"))


def test_unreachable_host_says_how_to_fix(server, isolated):
    with pytest.raises(DatasetUnavailableError, match="COURSE_DATA_MIRROR") as error:
        fetch(spec(f"{server}/missing.json"))
    assert "404" in str(error.value)
    assert not any(isolated.rglob("*.*"))


def test_mirror_is_used_and_verified(tmp_path, isolated, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "x").mkdir(parents=True)
    (mirror / "x" / "file.json").write_bytes(PAYLOAD)
    monkeypatch.setenv(datasets.MIRROR_ENV, str(mirror))
    assert fetch(spec("http://127.0.0.1:9/none")) == mirror / "x" / "file.json"
    (mirror / "x" / "file.json").write_bytes(b"tampered")
    with pytest.raises(DatasetUnavailableError, match="damaged"):
        fetch(spec("http://127.0.0.1:9/none"))


def test_cmrc_quirks_are_handled(cmrc_kb):
    assert len(cmrc_kb.files) == 26
    assert len(cmrc_kb.paragraphs) == 256
    assert len(cmrc_kb.questions) == 1000 and len(cmrc_kb.skipped) == 2
    assert len(cmrc_kb.fixed_offsets) == 5
    for q in cmrc_kb.questions:
        text = cmrc_kb.files[q.file_name]
        assert text[q.paragraph_offset:q.paragraph_offset + len(q.paragraph)] == q.paragraph
        for start, answer in zip(q.answer_starts, q.answers, strict=True):
            assert q.paragraph[start:start + len(answer)] == answer
    assert all(text.count("\n") == 9 for text in list(cmrc_kb.files.values())[:-1])


def test_squad_loader_on_a_small_file(tmp_path):
    data = {"data": [{"title": "t", "paragraphs": [{"context": "甲乙丙丁。", "qas": [
        {"id": "q1", "question": "乙？", "answers": [{"text": "乙丙", "answer_start": 2}]},
        {"id": "q2", "question": " ", "answers": []}]}]}]}
    path = tmp_path / "s.json"
    path.write_text(__import__("json").dumps(data, ensure_ascii=False), encoding="utf-8")
    squad = load_squad(path)
    assert squad.skipped == ["q2"] and squad.fixed_offsets == ["q1"]
    assert squad.questions[0].answer_starts == [1]
    kb = build_knowledge_base(squad, docs_per_file=1)
    assert kb.files == {"doc_1.txt": "甲乙丙丁。"}
    with pytest.raises(ValueError, match="docs_per_file"):
        build_knowledge_base(squad, docs_per_file=0)
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(ValueError, match="SQuAD"):
        load_squad(tmp_path / "bad.json")


def test_sample_corpus_questions_point_at_real_paragraphs():
    texts, questions = load_sample()
    assert len(texts) >= 5 and len(questions) >= 10
    for q in questions:
        assert q["paragraph"] in texts[q["file_name"]].split("\n")
        assert q["answer"] in q["paragraph"]


def test_no_cmrc_data_is_tracked_in_the_repository():
    root = Path(__file__).resolve().parent.parent
    for path in root.rglob("*.json"):
        if ".venv" in path.parts or "cache" in path.parts:
            continue
        assert "_QUERY_" not in path.read_text(encoding="utf-8", errors="ignore"), path
