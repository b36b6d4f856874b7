"""A tiny knowledge base of places for tests that need questions with gold paragraphs: one
paragraph per place, written from a template, and two questions about it whose answers are in
it. Each test chooses the wording (the numbers and shared words decide what BM25 finds)."""

from course_lib.lab.data.datasets import Question

PLACES = ["长城", "故宫", "西湖", "黄山", "泰山", "丽江", "敦煌", "桂林", "黄河", "长江",
          "三峡", "华山", "峨眉", "苏州", "洱海", "天山"]


def place_paragraphs(places: list[str], fact: str, asked: list[tuple[str, str]]
                     ) -> tuple[list[tuple[str, str]], list[Question]]:
    """(paragraphs, questions): paragraph ``P{i}`` is ``fact`` for place ``i``; its questions
    ``Q{i}-{j}`` are ``asked`` (question, answer) templates. Templates take ``{place}``, ``{i}``.

    >>> paragraphs, questions = place_paragraphs(["长城"], "{place}在第{i}区。",
    ...                                          [("{place}在哪个区？", "第{i}区")])
    >>> paragraphs, questions[0].question, questions[0].answers
    ([('P0', '长城在第0区。')], '长城在哪个区？', ['第0区'])
    """
    paragraphs, questions = [], []
    for i, place in enumerate(places):
        text = fact.format(place=place, i=i)
        paragraphs.append((f"P{i}", text))
        for j, (question, answer) in enumerate(asked):
            answer = answer.format(place=place, i=i)
            questions.append(Question(f"Q{i}-{j}", question.format(place=place, i=i), [answer],
                                      [text.index(answer)], f"P{i}", text))
    return paragraphs, questions
