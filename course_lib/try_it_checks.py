"""Tests for the short "try it" cells of notebooks 00, 04, 05, 06, 08 and 11.

Each ``check_*`` function takes what the learner wrote (and what it needs from the
notebook) and returns ``True`` or a sentence saying what is wrong — the ``test`` that
:func:`course_lib.exercises.try_it` expects. They build their own small inputs, so a
learner's answer is tried on cases the notebook did not print.

>>> check_first_paragraphs_filter({"paragraph_index": [0]}, None)
'give the Document of section 1 (doc) as the second argument'
>>> check_swapped_score(None, lambda query, texts: [0.5], "passage", "question")
'give the score as a number (a float), not None'
"""

from __future__ import annotations

import csv
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .datasets import KnowledgeBase
from .document import Document
from .node import DocNode
from .readers import READERS, register_reader
from .rerank import Reranker
from .retriever import Retriever, matches_filters
from .validation import is_number

__all__ = ["FAQ_ROWS", "check_answer_or_search", "check_bind_pipeline", "check_csv_reader",
           "check_encode_embedder", "check_first_paragraphs_filter", "check_joined_context",
           "check_recommend_in_file", "check_swapped_score"]

# A small FAQ: an answer holds a comma, which a naive split(",") cuts in two.
FAQ_ROWS = [
    ("茶叶怎么保存？", "密封、避光，放在阴凉干燥处", "storage"),
    ("绿茶用多少度的水泡？", "80度左右", "brewing"),
    ("中国人喝茶有多少年了？", "约4,000年", "history"),
]


def check_csv_reader(reader: Callable[[Path], Any]) -> bool | str:
    """Notebook 00: ``reader(path)`` reads a ``question,answer,category`` CSV (with a
    header row) into one DocNode per row: text = the question, metadata ``answer`` and
    ``category``; and, registered for ``.csv``, it makes one root node per row."""
    if not callable(reader):
        return f"give the reader function itself, got {type(reader).__name__}"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "faq.csv"
        with path.open("w", encoding="utf-8", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(["question", "answer", "category"])
            writer.writerows(FAQ_ROWS)
        nodes = reader(path)
        if not isinstance(nodes, list) or not all(isinstance(n, DocNode) for n in nodes):
            return f"return a list of DocNodes, one per row; got {type(nodes).__name__}"
        if len(nodes) != len(FAQ_ROWS):
            hint = " (is the header row read as a question?)" if len(nodes) == 4 else ""
            return f"a file of {len(FAQ_ROWS)} rows gave {len(nodes)} nodes{hint}"
        for node, (question, answer, category) in zip(nodes, FAQ_ROWS, strict=True):
            if node.text != question:
                return f"a node's text should be the question {question!r}, got {node.text!r}"
            if node.metadata.get("answer") != answer:
                return (f"metadata['answer'] should be {answer!r}, got "
                        f"{node.metadata.get('answer')!r} (read the rows with the csv module: "
                        "an answer may hold a comma)")
            if node.metadata.get("category") != category:
                return f"metadata['category'] should be {category!r}, got " \
                       f"{node.metadata.get('category')!r}"
        before = READERS.get(".csv")
        register_reader(".csv", reader)
        try:
            roots = Document(files=[path]).get_nodes("root")
        finally:  # leave the learner's registry as it was
            if before is None:
                READERS.pop(".csv", None)
            else:
                READERS[".csv"] = before
        if [n.metadata.get("file_name") for n in roots] != ["faq.csv"] * len(FAQ_ROWS):
            return "each root node should also carry the file's metadata (file_name)"
    return True


def check_first_paragraphs_filter(filters: Any, doc: Document | None,
                                  group: str = "para_nodes") -> bool | str:
    """Notebook 04: ``filters`` keep exactly the first paragraph of every file in
    ``doc``'s ``group`` (the nodes whose uid ends in ``[0]``)."""
    if doc is None:
        return "give the Document of section 1 (doc) as the second argument"
    try:
        Retriever(doc, group, filters=filters)  # the same checks a retriever makes
    except (TypeError, ValueError) as error:
        return f"Retriever refuses these filters: {error}"
    nodes = doc.get_nodes(group)
    kept = {n.uid for n in nodes if matches_filters(n, filters)}
    wanted = {n.uid for n in nodes if n.uid.endswith("[0]")}
    if kept == wanted:
        return True
    return (f"these filters keep {len(kept)} of the {len(nodes)} paragraphs; the first "
            f"paragraphs of the files are {len(wanted)}"
            + (f", e.g. {sorted(kept - wanted)[0]!r} is not one" if kept - wanted else ""))


def check_recommend_in_file(recommend: Callable[[str, str], list[DocNode]],
                            bank: Document) -> bool | str:
    """Notebook 05: ``recommend(question, file_name)`` returns up to 3 stored questions
    of ``bank`` (its ``stored_qa`` group), all from ``file_name``, none the question
    itself — also when the question comes from another file."""
    if not callable(recommend):
        return f"give the function itself, got {type(recommend).__name__}"
    stored = bank.get_nodes("stored_qa")
    asked = stored[len(stored) // 2]
    home = asked.metadata["file_name"]
    away = next(n.metadata["file_name"] for n in stored if n.metadata["file_name"] != home)
    for file_name in (home, away):
        found = recommend(asked.text, file_name)
        if not isinstance(found, list) or not all(isinstance(n, DocNode) for n in found):
            return f"return a list of stored question nodes, got {type(found).__name__}"
        if not 1 <= len(found) <= 3:
            return f"return up to 3 questions (at least one); got {len(found)}"
        files = {n.metadata.get("file_name") for n in found}
        if files != {file_name}:
            return f"asked for questions of {file_name!r}, got some from {sorted(files)}"
        if any(n.text == asked.text for n in found):
            return "the question asked is recommended back: use related_questions, which " \
                   "drops it"
        if len({n.text for n in found}) != len(found):
            return "a question is recommended twice"
    return True


def check_answer_or_search(answer_or_search: Callable[[str], tuple[str, str]],
                           kb: KnowledgeBase) -> bool | str:
    """Notebook 11: ``answer_or_search(question)`` gives ``("stored", answer)`` for a
    stored question asked verbatim, else ``("searched", text of the best paragraph)``."""
    if not callable(answer_or_search):
        return f"give the function itself, got {type(answer_or_search).__name__}"
    question = kb.questions[0]
    got = answer_or_search(question.question)
    if got != ("stored", question.answers[0]):
        return (f"asked the stored question {question.question!r}, expected "
                f"('stored', {question.answers[0]!r}), got {got!r:.80}")
    changed = question.question.rstrip("？?") + "呢？"
    got = answer_or_search(changed)
    if not isinstance(got, tuple) or len(got) != 2 or got[0] != "searched":
        return f"asked {changed!r}, which is not stored, expected ('searched', ...), " \
               f"got {got!r:.80}"
    if got[1] != question.paragraph:
        return f"asked {changed!r}, the search should hand back its paragraph's text; " \
               f"got {got[1]!r:.60}"
    return True


def check_encode_embedder(cls: Any, service: Any, texts: Sequence[str],
                          query: str) -> bool | str:
    """Notebook 06: is ``cls`` an :class:`~course_lib.embeddings.HTTPEmbedder` subclass
    that speaks the ``/v2/encode`` dialect of ``service`` (an
    :class:`~course_lib.embedding_service.EmbeddingService`)?

    Builds ``cls(service.url + "/v2/encode")`` and compares its ``embed(texts)`` and
    ``embed_query(query)`` with what the service's embedder computes in this process.
    """
    from .embeddings import HTTPEmbedder

    if not (isinstance(cls, type) and issubclass(cls, HTTPEmbedder)):
        return f"give a class that subclasses HTTPEmbedder, not {cls!r:.60}"
    client = cls(service.url + "/v2/encode")
    passages = client.embed(list(texts))
    expected = service.embed(list(texts), is_query=False)
    if passages.shape != expected.shape or not np.array_equal(passages, expected):
        return (f"embed(texts) gave {passages.shape} vectors that differ from the service's "
                f"passage vectors {expected.shape}: is the order of the vectors kept?")
    question = client.embed_query(query)
    if np.array_equal(question, service.embed([query], is_query=True)[0]):
        return True
    if np.array_equal(question, service.embed([query], is_query=False)[0]):
        return ("embed_query gave the *passage* vector of the query: send kind='query' "
                "when is_query is True")
    return f"embed_query gave a vector of shape {question.shape} that is not the service's"


def check_swapped_score(score: Any, scorer: Callable[[str, list[str]], Sequence[float]],
                        passage: str, question: str) -> bool | str:
    """Notebook 08: is ``score`` what ``scorer`` gives the pair read the other way round,
    ``passage`` first and ``question`` second?

    >>> def first_longer(query, texts):
    ...     return [float(len(query) > len(text)) for text in texts]
    >>> check_swapped_score(1.0, first_longer, "a long passage", "short?")
    True
    >>> check_swapped_score(0.0, first_longer, "a long passage", "short?")
    '0.0 is the score of (question, passage), the order of the table: swap the two'
    """
    if not is_number(score):
        return f"give the score as a number (a float), not {score!r:.40}"
    swapped = float(scorer(passage, [question])[0])
    if abs(score - swapped) < 1e-6:
        return True
    if abs(score - float(scorer(question, [passage])[0])) < 1e-6:
        return (f"{score!r} is the score of (question, passage), the order of the table: "
                f"swap the two")
    return f"{score!r} is not the score of (passage, question): call scorer(passage, [question])"


# Small inputs of the checks below, apart from what the notebook prints: five paragraphs
# of which three share characters with the query.
_NODES = [DocNode(text, uid=f"n{i}", metadata={"file_name": f"doc_{i % 2}.txt"})
          for i, text in enumerate(["长城东起山海关。", "西湖在杭州。", "长城是军事防御工程。",
                                    "龙井是绿茶。", "八达岭长城游客最多。"])]


def check_joined_context(reranker: Any, separator: str = "\n---\n", topk: int = 3
                         ) -> bool | str:
    """Notebook 08: does ``reranker`` return its ``topk`` best candidates as one string,
    ``separator`` between them? Tried on a few nodes of its own, with the reranker's own
    model.

    >>> def shared(query, texts):
    ...     return [len(set(query) & set(text)) for text in texts]
    >>> check_joined_context(Reranker(model=shared, topk=3, output_format="content",
    ...                               join="\\n---\\n"))
    True
    >>> check_joined_context(Reranker(model=shared, topk=3, output_format="content"))
    'got a list, not one string: join the texts'
    """
    if not isinstance(reranker, Reranker) or not hasattr(reranker, "scorer"):
        return f"give a Reranker('ModuleReranker', model=..., ...), not {reranker!r:.60}"
    best = Reranker(model=reranker.scorer, topk=topk, output_format="content")(
        _NODES, query="长城在哪里？")
    got = reranker(_NODES, query="长城在哪里？")
    if not isinstance(got, str):
        return f"got a {type(got).__name__}, not one string: join the texts"
    if got == "".join(best):
        return "the paragraphs run into each other: give join the separator, not True"
    if got.count(separator) != len(best) - 1:
        return (f"got {got.count(separator) + 1} part(s) between {separator!r} separators; "
                f"the best {topk} need {topk - 1} separators")
    return got == separator.join(best) or "the parts are not the best candidates, best first"


def check_bind_pipeline(chain: Any, by_hand: Callable[[str], Any],
                        questions: Sequence[str]) -> bool | str:
    """Notebook 08: does the pipeline ``chain`` give what the plain function ``by_hand``
    gives, for every question? (A reranker bound to a fixed question passes on that
    question only: several questions tell.)

    >>> from course_lib.fusion import INPUT, bind, pipeline
    >>> by_hand = lambda q: q.upper() + q
    >>> check_bind_pipeline(pipeline(str.upper, bind(str.__add__, INPUT)), by_hand, ["a", "b"])
    True
    >>> check_bind_pipeline(pipeline(str.upper, bind(str.__add__, "a")), by_hand, ["a", "b"])
    "for 'b' the pipeline gave 'Ba', the plain function 'Bb'"
    """
    from .fusion import pipeline

    if not isinstance(chain, pipeline):
        return f"give a pipeline(...), not {chain!r:.60}"
    for question in questions:
        got, expected = chain(question), by_hand(question)
        if got != expected:
            return f"for {question!r} the pipeline gave {got!r:.60}, the plain function " \
                   f"{expected!r:.60}"
    return True
