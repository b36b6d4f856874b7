"""The one coverage rule: the share of a question's terms found in a text.

The reranker (:class:`~course_lib.rerank.FeatureReranker`), the answerability detector and
the offline LLM all ask "how much of the question does this text hold?"; :func:`coverage`
is the one answer, weighted (idf) or not, by tokens or by substrings. It does not make the
terms: a caller tokenises (:mod:`course_lib.text_tokens`) and drops what should not count
(:func:`~course_lib.word_tags.function_words`).

>>> coverage(["长城", "故宫"], "万里长城", match="substring")
0.5
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping

MATCHES = ("token", "substring")


def coverage(terms: Iterable[str], within: str | Container[str], *,
             weights: Mapping[str, float] | None = None, match: str = "token") -> float:
    """The share of ``terms`` (a query's words or bigrams, distinct) found ``within`` a
    text: the one coverage rule of the reranker, the answerability detector and the
    offline LLM. 0.0 when the terms have no weight at all (no terms).

    * ``weights`` — ``{term: weight}``, e.g. idf: finding a rare word ("嘉峪关") says more
      than finding a common one ("中国"), so the reranker and the detector weight by
      idf. ``None`` counts every term once: the offline LLM's judge has no collection
      to take an idf from. Terms are added in the order given (a float sum depends on it).
    * ``match`` — ``"token"``: ``within`` is the text's tokens (any container: a set, a
      ``Counter``) and a term must be one of them; the reranker has every candidate's
      tokens counted and cached already. ``"substring"``: ``within`` is the text, lower-cased,
      and a term (lower-case, as every tokeniser here gives it) is found anywhere in it —
      robust to jieba cutting the text
      differently from the question ("长城" is in "万里长城", one jieba word), which the
      detector and the offline LLM read line by line without tokenising.

    >>> coverage(["长城", "山海关"], "万里长城东起山海关", match="substring")
    1.0
    >>> coverage(["长城", "山海关"], {"万里长城", "山海关"}, weights={"长城": 1.0, "山海关": 3.0})
    0.75
    """
    terms = list(terms)
    found = covered_terms(terms, within, match=match)
    if weights is None:
        return len(found) / len(terms) if terms else 0.0
    total = sum(weights[term] for term in terms)
    return sum(weights[term] for term in found) / total if total else 0.0


def covered_terms(terms: Iterable[str], within: str | Container[str], *,
                  match: str = "token") -> list[str]:
    """The ``terms`` found ``within`` a text, in their order: what :func:`coverage` counts
    (``match`` as there).

    >>> covered_terms(["长城", "故宫"], "万里长城", match="substring")
    ['长城']
    """
    if match not in MATCHES:
        raise ValueError(f"match must be one of {MATCHES}, got {match!r}")
    if match == "substring":
        if not isinstance(within, str):
            raise TypeError(f"match='substring' needs the text, got {type(within).__name__}")
        within = within.lower()
    return [term for term in terms if term in within]
