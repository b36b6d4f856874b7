import pytest

from course_lib import Document, Retriever, load_sample, split_paragraphs
from course_lib.llm import OfflineLLM, Reply
from course_lib.rewriting import (
    ExpansionRetriever,
    KeywordRetriever,
    MultiQueryRetriever,
    MultiStepRetriever,
    SubQuestionRetriever,
)


@pytest.fixture(scope="module")
def retriever():
    texts, _ = load_sample()
    doc = Document(texts=texts)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    return Retriever(doc, "paragraph", "bm25_chinese", topk=3)


class Judge(OfflineLLM):
    """Offline answers, but the judge says what we script (as a model's text)."""

    def __init__(self, verdicts):
        self.verdicts = list(verdicts)
        self.rewrites = 0

    def judge(self, question, answer):
        from course_lib.llm_parsing import parse_judgement

        return parse_judgement(self.verdicts.pop(0) if self.verdicts else "False")

    def expand_query(self, query, context=()):
        self.rewrites += 1
        return Reply(f"{query} 第{self.rewrites}次", "scripted")


def test_multi_step_stops_when_solved(retriever):
    result = MultiStepRetriever(retriever, Judge(["True"]), max_steps=3).run("普洱属于哪一类茶？")
    assert len(result.steps) == 1 and result.stopped_because == "solved"
    assert "普洱" in result.answer


def test_multi_step_reads_false_as_false_and_respects_the_limit(retriever):
    # bool("False") is True: a loop testing bool(reply) would have stopped at step 1.
    llm = Judge(["False", "False", "False", "False"])
    result = MultiStepRetriever(retriever, llm, max_steps=3).run("普洱属于哪一类茶？")
    assert len(result.steps) == 3 and result.stopped_because == "step limit"
    assert [s.solved for s in result.steps] == [False, False, False]
    assert result.steps[1].query.endswith("第1次")


def test_multi_step_unreadable_judge_counts_as_not_solved(retriever):
    result = MultiStepRetriever(retriever, Judge(["嗯……", "True"]), max_steps=5).run("长城在哪？")
    assert [s.solved for s in result.steps] == [None, True]


def test_multi_step_stops_when_the_rewrite_is_stuck(retriever):
    result = MultiStepRetriever(retriever, OfflineLLM(), max_steps=10).run("月亮上有什么？")
    assert len(result.steps) <= 10
    with pytest.raises(ValueError, match="max_steps"):
        MultiStepRetriever(retriever, OfflineLLM(), max_steps=0)


def test_sub_questions_union_and_limit(retriever):
    sub = SubQuestionRetriever(retriever, OfflineLLM())
    assert sub.sub_questions("长城和故宫分别在哪里？") == ["长城在哪里？", "故宫在哪里？"]
    assert len(sub.sub_questions("甲？乙？丙？丁？")) == 3
    nodes = sub("长城和普洱分别是什么？")
    assert len({n.uid for n in nodes}) == len(nodes)
    assert any("长城" in n.text for n in nodes) and any("普洱" in n.text for n in nodes)
    with pytest.raises(ValueError, match="limit"):
        SubQuestionRetriever(retriever, OfflineLLM(), limit=4)


def test_expansion_multi_query_and_keywords(retriever):
    expansion = ExpansionRetriever(retriever, OfflineLLM())
    assert "普洱" in expansion("普洱属于哪一类茶？")[0].text
    assert expansion.last_rewrite.startswith("普洱属于哪一类茶？")
    multi = MultiQueryRetriever(retriever, OfflineLLM(), topk=2)
    nodes = multi("普洱属于哪一类茶？")
    assert len(nodes) <= 2 and "普洱" in nodes[0].text and len(multi.last_queries) <= 3
    keywords = KeywordRetriever(retriever, OfflineLLM(), limit=10)
    assert "菲尔普斯" in keywords("美国游泳运动员菲尔普斯获得了几枚金牌")[0].text
    assert 1 <= len(keywords.last_keywords) <= 10
    with pytest.raises(ValueError, match="limit"):
        KeywordRetriever(retriever, OfflineLLM(), limit=11)
    with pytest.raises(ValueError, match="query"):
        multi("")


def test_keywords_of_several_texts_equal_jiebas_on_the_joined_text(cmrc_kb):
    """The cached, text-by-text keywords are jieba's own on the joined text (the
    feedback of the expansion and multi-query rewriters), on real top-3 contexts."""
    import jieba.analyse

    from course_lib.offline_llm import tfidf_keywords_of

    paragraphs = cmrc_kb.paragraphs
    for start in range(0, 240, 7):
        texts = paragraphs[start:start + 3]
        assert tfidf_keywords_of(texts, limit=20) == \
            jieba.analyse.extract_tags("\n".join(texts), topK=20), start
    assert tfidf_keywords_of([], limit=5) == []
