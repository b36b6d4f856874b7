"""The question bank (course_lib.lab.data.question_bank): stored QA pairs under their gold
paragraphs, a chosen subset, repeated paragraphs, and the same-paragraph rates of a
recommender over it (hand-made knowledge bases, BM25 on characters)."""

import pytest

from course_lib import Retriever
from course_lib.lab.data.datasets import Question, SquadSet, build_knowledge_base
from course_lib.lab.data.question_bank import BANK_GROUP, question_bank, same_paragraph_rates
from course_lib.llm_groups import QADocNode

TEA = "绿茶用八十度的水泡。绿茶产自浙江。"
WALL = "长城东起山海关，西至嘉峪关。"
RIVER = "黄河流经郑州。"
DECOY = "普洱茶产自云南。"


def ask(qid, text, answer, pid, paragraph):
    return Question(qid, text, [answer, "another answer"], [paragraph.index(answer), 0], pid,
                    paragraph)


QUESTIONS = [ask("t1", "绿茶用多少度的水泡？", "八十度", "p1", TEA),
             ask("t2", "绿茶用几度的水来泡？", "八十度", "p1", TEA),
             ask("t3", "绿茶产自哪个省？", "浙江", "p1", TEA),
             ask("w1", "长城东起哪里？", "山海关", "p2", WALL),
             ask("w2", "长城西至哪里？", "嘉峪关", "p2", WALL),
             ask("r1", "黄河流经哪座城市？", "郑州", "p3", RIVER)]


def kb_of(paragraphs, questions, docs_per_file=10):
    questions = [Question(q.id, q.question, list(q.answers), list(q.answer_starts),
                          q.paragraph_id, q.paragraph) for q in questions]
    return build_knowledge_base(SquadSet(paragraphs, questions), docs_per_file)


def tiny_kb():
    return kb_of([("p1", TEA), ("p2", WALL), ("p3", RIVER)], QUESTIONS)


def test_each_question_is_a_qa_node_under_its_gold_paragraph():
    kb = tiny_kb()
    stored = question_bank(kb).get_nodes(BANK_GROUP)
    assert BANK_GROUP == "stored_qa"
    assert [n.metadata["question_id"] for n in stored] == ["t1", "t2", "t3", "w1", "w2", "r1"]
    for node, question in zip(stored, kb.questions, strict=True):
        assert isinstance(node, QADocNode)
        assert node.text == question.question
        assert node.answer == question.answers[0]  # the first gold answer only
        assert node.parent.text == question.paragraph and node.parent.group == "paragraph"
        assert node.metadata["paragraph_id"] == question.paragraph_id
        assert node.metadata["file_name"] == "doc_1.txt"  # inherited from the file


def test_a_subset_of_questions_under_another_group_name():
    kb = tiny_kb()
    doc = question_bank(kb, group="faq", questions=kb.questions[::2])
    assert [n.metadata["question_id"] for n in doc.get_nodes("faq")] == ["t1", "t3", "w2"]
    assert [n.text for n in doc.get_nodes("paragraph")] == [TEA, WALL, RIVER]  # all paragraphs
    assert question_bank(kb, questions=[]).get_nodes(BANK_GROUP) == []


@pytest.mark.parametrize("questions", ["绿茶用多少度的水泡？", ["绿茶用多少度的水泡？"],
                                       [QUESTIONS[0], {"id": "x"}]])
def test_questions_must_be_question_objects(questions):
    with pytest.raises(TypeError, match="questions must be a list of Question objects"):
        question_bank(tiny_kb(), questions=questions)


def test_a_paragraph_repeated_in_one_file_holds_its_questions_once():
    questions = [ask("a1", "长城东起哪里？", "山海关", "pA", WALL),
                 ask("b1", "长城西至哪里？", "嘉峪关", "pB", WALL)]
    kb = kb_of([("pA", WALL), ("pB", WALL), ("p3", RIVER)], questions)  # one file
    doc = question_bank(kb)
    paragraphs = doc.get_nodes("paragraph")
    assert [n.text for n in paragraphs] == [WALL, WALL, RIVER]
    stored = doc.get_nodes(BANK_GROUP)
    assert sorted(n.metadata["question_id"] for n in stored) == ["a1", "b1"]  # not twice
    assert all(n.parent is paragraphs[0] for n in stored)


def test_a_paragraph_repeated_in_another_file_keeps_each_files_questions():
    questions = [ask("a1", "长城东起哪里？", "山海关", "pA", WALL),
                 ask("b1", "长城西至哪里？", "嘉峪关", "pB", WALL)]
    kb = kb_of([("pA", WALL), ("pB", WALL)], questions, docs_per_file=1)  # two files
    stored = {n.metadata["question_id"]: n.metadata["file_name"]
              for n in question_bank(kb).get_nodes(BANK_GROUP)}
    assert stored == {"a1": "doc_1.txt", "b1": "doc_2.txt"}


def rates(kb, k):
    return same_paragraph_rates(kb, Retriever(question_bank(kb), BANK_GROUP, "bm25_char"), k=k)


def test_rates_ask_only_questions_whose_paragraph_has_another():
    kb = tiny_kb()
    result = rates(kb, k=1)
    # r1 is its paragraph's only question: not asked. chance: t* 2/5 each, w* 1/5 each
    assert result["asked"] == 5
    assert result["chance"] == round((3 * 2 / 5 + 2 * 1 / 5) / 5, 4)
    assert result == {"asked": 5, "top1": 1.0, "any_of_k": 1.0, "chance": 0.32}


def test_a_decoy_question_costs_top1_but_not_any_of_k():
    decoy = ask("d1", "绿茶产自哪个省份？", "云南", "p4", DECOY)  # near t3, another paragraph
    kb = kb_of([("p1", TEA), ("p2", WALL), ("p3", RIVER), ("p4", DECOY)], [*QUESTIONS, decoy])
    first = rates(kb, k=1)
    assert first["asked"] == 5 and first["top1"] == 0.8 and first["any_of_k"] == 0.8
    wide = rates(kb, k=2)
    assert wide["top1"] == 0.8 and wide["any_of_k"] == 1.0
    assert first["chance"] == wide["chance"] == round((3 * 2 / 6 + 2 * 1 / 6) / 5, 4)


def test_rates_need_a_paragraph_with_two_questions_and_a_whole_k():
    single = kb_of([("p1", TEA), ("p3", RIVER)], [QUESTIONS[0], QUESTIONS[5]])
    retriever = Retriever(question_bank(single), BANK_GROUP, "bm25_char")
    with pytest.raises(ValueError, match="no paragraph of the knowledge base has two"):
        same_paragraph_rates(single, retriever)
    with pytest.raises(ValueError, match="k"):
        same_paragraph_rates(tiny_kb(), retriever, k=0)
