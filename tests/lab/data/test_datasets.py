import hashlib
import http.server
import json
import threading
from pathlib import Path

import pytest

from course_lib._support import places
from course_lib.lab.data import datasets
from course_lib.lab.data.datasets import (
    DatasetFormatError,
    DatasetUnavailableError,
    SquadSet,
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
    monkeypatch.setenv(places.CACHE_ENV, str(tmp_path / "cache"))
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


def test_cmrc_dev_loads_every_question_and_counts_what_it_repaired():
    squad = load_squad(datasets.fetch_cmrc2018(split="dev"))
    assert len(squad.paragraphs) == 848 and len(squad.questions) == 3219
    # 193 secondary answers of 174 questions carry answer_start -1 and a text that is not
    # in the context; each of those questions keeps a located answer.
    assert len(squad.dropped_answers) == 193 and len(set(squad.dropped_answers)) == 174
    for q in squad.questions:
        assert q.answers, q.id
        for start, answer in zip(q.answer_starts, q.answers, strict=True):
            assert q.paragraph[start:start + len(answer)] == answer
    assert "193 unlocatable answers dropped from 174 questions" in squad.summary()
    held_out = datasets.load_held_out_kb()
    assert (len(held_out.files), len(held_out.paragraphs)) == (26, 256)
    kept = {q.id for q in held_out.questions}
    assert set(held_out.dropped_answers) <= kept and len(kept) == 898


def test_an_unlocated_answer_is_located_or_dropped_and_its_question_kept(tmp_path):
    data = {"data": [{"paragraphs": [{"context": "甲乙丙丁。", "qas": [
        {"id": "q1", "question": "乙？", "answers": [{"text": "乙丙", "answer_start": -1}]},
        {"id": "q2", "question": "丙？", "answers": [{"text": "丙丁。", "answer_start": 2},
                                                   {"text": "丙丁。。", "answer_start": -1}]},
        {"id": "q3", "question": "戊？", "answers": [{"text": "戊", "answer_start": -1}]}]}]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    squad = load_squad(path)
    assert [q.id for q in squad.questions] == ["q1", "q2", "q3"]
    assert squad.questions[0].answer_starts == [1] and squad.fixed_offsets == ["q1"]
    assert squad.questions[1].answers == ["丙丁。"] and squad.questions[2].answers == []
    assert squad.dropped_answers == ["q2", "q3"]
    with pytest.raises(ValueError, match="split must be one of 'trial', 'dev'"):
        datasets.fetch_cmrc2018(split="test")


def test_squad_loader_on_a_small_file(tmp_path):
    data = {"data": [{"title": "t", "paragraphs": [{"context": "甲乙丙丁。", "qas": [
        {"id": "q1", "question": "乙？", "answers": [{"text": "乙丙", "answer_start": 2}]},
        {"id": "q2", "question": " ", "answers": []}]}]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
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
    root = Path(__file__).resolve().parents[3]
    for path in root.rglob("*.json"):
        if ".venv" in path.parts or "cache" in path.parts:
            continue
        assert "_QUERY_" not in path.read_text(encoding="utf-8", errors="ignore"), path


# ---------------------------------------------------------------- unique paragraph ids
PARAGRAPHS = [("长城是中国古代的军事防御工程，修筑历史很长。", "军事防御工程"),
              ("熊猫主要吃竹子，生活在四川的山林里。", "竹子"),
              ("黄河是中国第二长河，发源于青海。", "青海"),
              ("西湖位于杭州，湖边有苏堤和白堤。", "杭州")]


def two_articles(path, titles):
    """Two articles of two paragraphs each, one question per paragraph, no paragraph ids."""
    articles = []
    for a, title in enumerate(titles):
        paragraphs = []
        for i, (context, answer) in enumerate(PARAGRAPHS[2 * a:2 * a + 2]):
            question = context.replace(answer, "什么")  # shares most words with its paragraph
            paragraphs.append({"context": context, "qas": [{
                "id": f"q{a}{i}", "question": question,
                "answers": [{"text": answer, "answer_start": context.index(answer)}]}]})
        articles.append({"paragraphs": paragraphs} | ({"title": title} if title else {}))
    path.write_text(json.dumps({"data": articles}, ensure_ascii=False),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize(("titles", "ids"), [
    ((None, None), ["article_0_0", "article_0_1", "article_1_0", "article_1_1"]),
    (("同名", "同名"), ["同名_0", "同名_1", "同名#1_0", "同名#1_1"]),
    (("", "t"), ["article_0_0", "article_0_1", "t_0", "t_1"]),
])
def test_paragraphs_without_ids_get_unique_ones_and_questions_find_their_file(tmp_path, titles,
                                                                               ids):
    from course_lib.lab.measure.evaluation import evaluate
    squad = load_squad(two_articles(tmp_path / "s.json", titles))
    assert [pid for pid, _ in squad.paragraphs] == ids
    assert [q.paragraph_id for q in squad.questions] == ids
    kb = build_knowledge_base(squad, docs_per_file=1)
    assert [q.file_name for q in kb.questions] == sorted(kb.files)  # one file each, in order
    for q in kb.questions:
        assert kb.files[q.file_name][q.paragraph_offset:].startswith(q.paragraph)
    # Before ids were unique, both articles' first paragraphs were "article_0": the first
    # article's questions pointed at the second's files (span recall 0.5, recall 1.0).
    result = evaluate(kb, "bm25-paragraph", span_recall=True)
    assert result["recall@1"] == result["span_recall@1"] == 1.0


def test_a_generated_id_steps_aside_for_an_explicit_one(tmp_path):
    path = two_articles(tmp_path / "s.json", ("t", None))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["data"][1]["paragraphs"][0]["id"] = "t_0"  # the id the first article would get
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    ids = [pid for pid, _ in load_squad(path).paragraphs]
    assert ids == ["t_0#0", "t_1", "t_0", "article_1_1"] and len(set(ids)) == 4


def test_build_knowledge_base_refuses_ambiguous_paragraph_ids(tmp_path):
    squad = load_squad(two_articles(tmp_path / "s.json", ("t", "u")))
    twice = SquadSet([squad.paragraphs[0], squad.paragraphs[0]], [])
    with pytest.raises(ValueError, match="id 't_0' more than once"):
        build_knowledge_base(twice)
    squad.questions[0].paragraph_id = "nowhere"
    with pytest.raises(ValueError, match="question 'q00' names a paragraph_id that is not"):
        build_knowledge_base(squad)


def test_squad_loader_reads_a_byte_order_mark_and_ignores_unused_fields(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"version": "v2", "data": [
        {"paragraphs": [{"context": "ab", "qas": [{"id": 7, "question": "a?", "answers": [],
                                                   "is_impossible": True}]}]}]}).encode())
    squad = load_squad(path)
    assert squad.questions[0].id == "7" and squad.questions[0].answers == []


def test_a_dataset_format_error_is_a_value_error(tmp_path):
    (tmp_path / "s.json").write_text('{"data": {}}')
    with pytest.raises(ValueError, match=r"s\.json: data must be a list"):
        load_squad(tmp_path / "s.json")
    assert issubclass(DatasetFormatError, ValueError)
