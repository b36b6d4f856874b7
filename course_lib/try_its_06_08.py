"""Tests for the short "try it" cells of notebooks 06 and 08.

(Those of notebooks 00, 04, 05 and 11 are in :mod:`course_lib.try_it_checks`.) Each
``check_*`` function takes what the learner wrote, and what it needs from the notebook,
and returns ``True`` or a sentence saying what is wrong — the ``test`` that
:func:`course_lib.exercises.try_it` expects.

>>> check_swapped_score(None, lambda query, texts: [0.5], "passage", "question")
'give the score as a number (a float), not None'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .node import DocNode
from .rerank import Reranker
from .validation import is_number

__all__ = ["check_bind_pipeline", "check_encode_embedder", "check_joined_context",
           "check_swapped_score"]


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
    ``separator`` between them? Tried on the notebook's question and on a few nodes of
    its own, with the reranker's own model.

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
