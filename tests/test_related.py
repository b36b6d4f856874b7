"""Related questions from stored QA pairs, and the try-it checks of notebooks 00/04/05/11."""

import csv

import pytest

from course_lib import DocNode, Document, Retriever, knowledge_base_document, readers
from course_lib.lab.data.question_bank import question_bank, same_paragraph_rates
from course_lib.lab.teaching.exercises import try_it
from course_lib.lab.teaching.try_it_checks import (
    check_answer_or_search,
    check_csv_reader,
    check_first_paragraphs_filter,
    check_recommend_in_file,
)
from course_lib.llm_groups import QADocNode
from course_lib.related import related_questions

PAIRS = [("绿茶用多少度的水泡？", "80度"), ("红茶用多少度的水泡？", "95度"),
         ("红茶用多少度的水泡？", "95度"), ("茶叶怎么保存？", "密封避光"),
         ("长城有多长？", "两万多公里")]


@pytest.fixture()
def bank():
    doc = Document(texts={"faq.txt": "x"})
    doc.create_node_group("qa", transform=lambda _: [QADocNode(q, answer=a) for q, a in PAIRS])
    return Retriever(doc, "qa", "bm25_char", topk=1)


def test_related_questions_drop_the_question_itself_and_repeats(bank):
    found = related_questions("绿茶用多少度的水泡？", bank, k=3)
    assert [n.text for n in found] == ["红茶用多少度的水泡？", "长城有多长？", "茶叶怎么保存？"]
    assert found[0].answer == "95度" and found[0].score > found[1].score
    assert [n.text for n in related_questions("红茶用多少度的水泡？", bank, k=1)] == \
        ["绿茶用多少度的水泡？"]  # both stored copies of the question itself are dropped


def test_related_questions_returns_fewer_when_nothing_else_matches(bank):
    words = Retriever(bank.doc, "qa", "bm25_chinese", topk=1)
    assert [n.text for n in related_questions("长城有多长？", words, k=3)] == []
    assert [n.text for n in related_questions("绿茶用多少度的水泡？", words, k=3)] == \
        ["红茶用多少度的水泡？"]


@pytest.mark.parametrize("args,error,message", [
    (("", "bank", 3), ValueError, "query is empty"),
    (("茶", "bank", 0), ValueError, r"k must be an integer"),
    (("茶", "not a retriever", 3), TypeError, "retriever must be a Retriever over a group"),
])
def test_related_questions_refuses_bad_arguments(bank, args, error, message):
    question, retriever, k = args
    with pytest.raises(error, match=message):
        related_questions(question, bank if retriever == "bank" else retriever, k)


def test_question_bank_files_each_question_under_its_gold_paragraph(cmrc_kb):
    doc = question_bank(cmrc_kb)
    stored = doc.get_nodes("stored_qa")
    assert len(stored) == len(cmrc_kb.questions)
    by_id = {q.id: q for q in cmrc_kb.questions}
    for node in stored:
        question = by_id[node.metadata["question_id"]]
        assert node.text == question.question and node.answer == question.answers[0]
        assert node.parent.text == question.paragraph
        assert node.metadata["file_name"] == question.file_name
        assert node.metadata["paragraph_id"] == question.paragraph_id


def test_same_paragraph_rates_are_far_above_chance_on_cmrc(cmrc_kb):
    doc = question_bank(cmrc_kb)
    rates = same_paragraph_rates(cmrc_kb, Retriever(doc, "stored_qa", "bm25_char"), k=3)
    assert rates["asked"] > 900 and rates["chance"] < 0.01
    assert 0.5 < rates["top1"] <= rates["any_of_k"] < 0.95


# ------------------------------------------------------------ try-it checks
def good_csv_reader(path):
    with path.open(encoding="utf-8", newline="") as file:
        return [DocNode(row["question"], metadata={"answer": row["answer"],
                                                    "category": row["category"]})
                for row in csv.DictReader(file)]


def naive_csv_reader(path):
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [DocNode(q, metadata={"answer": a, "category": c})
            for q, a, c, *_ in (line.split(",") for line in lines)]


def test_csv_reader_check_passes_a_csv_reader_and_explains_a_naive_split():
    before = dict(readers.READERS)
    assert check_csv_reader(good_csv_reader) is True
    assert readers.READERS == before  # the check leaves the registry as it was
    message = check_csv_reader(naive_csv_reader)
    assert "an answer may hold a comma" in message
    with_header = check_csv_reader(lambda p: [DocNode(line) for line in
                                              p.read_text(encoding="utf-8").splitlines()])
    assert "header row" in with_header
    assert try_it("csv", good_csv_reader, check_csv_reader) is True


def test_first_paragraphs_filter_check():
    doc = Document(texts={"a.txt": "甲\n乙", "b.txt": "丙\n丁\n戊"})
    doc.create_node_group("para_nodes", trans_node=True, transform=lambda node: [
        DocNode(t, metadata={"paragraph_index": i}) for i, t in enumerate(node.text.split("\n"))])
    assert check_first_paragraphs_filter({"paragraph_index": [0]}, doc) is True
    assert "keep 3 of the 5 paragraphs; the first paragraphs of the files are 2" in \
        check_first_paragraphs_filter({"paragraph_index": [1, 2]}, doc)
    assert "Retriever refuses these filters" in \
        check_first_paragraphs_filter({"paragraph_index": 0}, doc)


def test_recommend_in_file_check(cmrc_kb):
    doc = question_bank(cmrc_kb)

    def right(question, file_name):
        retriever = Retriever(doc, "stored_qa", "bm25_char", filters={"file_name": [file_name]})
        return related_questions(question, retriever, k=3)

    def unfiltered(question, file_name):
        return related_questions(question, Retriever(doc, "stored_qa", "bm25_char"), k=3)

    def keeps_itself(question, file_name):
        retriever = Retriever(doc, "stored_qa", "bm25_char", topk=3,
                              filters={"file_name": [file_name]})
        return retriever(question)

    assert check_recommend_in_file(right, doc) is True
    assert "got some from" in check_recommend_in_file(unfiltered, doc)
    assert "the question asked is recommended back" in check_recommend_in_file(keeps_itself, doc)


def test_answer_or_search_check(cmrc_kb):
    bank = question_bank(cmrc_kb)
    exact = Retriever(bank, "stored_qa", index="map", map_key="text")
    search = Retriever(knowledge_base_document(cmrc_kb), "paragraph", "bm25_chinese", topk=1)

    def right(question):
        stored = exact(question)
        if stored:
            return "stored", stored[0].answer
        return "searched", search(question)[0].text

    def always_search(question):
        return "searched", search(question)[0].text

    def stored_only(question):
        stored = exact(question)
        return ("stored", stored[0].answer) if stored else ("stored", "")

    assert check_answer_or_search(right, cmrc_kb) is True
    assert "expected ('stored'," in check_answer_or_search(always_search, cmrc_kb)
    assert "expected ('searched', ...)" in check_answer_or_search(stored_only, cmrc_kb)
