"""Tests for the short "try it" cells of notebooks 00, 01, 04, 05, 06, 08, 11 and 12.

Each ``check_*`` function takes what the learner wrote (and what it needs from the
notebook) and returns ``True`` or a sentence saying what is wrong — the ``test`` that
:func:`course_lib.lab.teaching.exercises.try_it` expects. They build their own small inputs, so a
learner's answer is tried on cases the notebook did not print.

>>> check_first_paragraphs_filter({"paragraph_index": [0]}, None)
'give the Document of section 1 (doc) as the second argument'
>>> check_swapped_score(None, lambda query, texts: [0.5], "passage", "question")
'give the score as a number (a float), not None'
"""

from __future__ import annotations

import csv
import math
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..._support.validation import is_number
from ...answerability import choose_threshold
from ...document import Document
from ...node import DocNode
from ...readers import READERS, register_reader
from ...rerank import Reranker
from ...retriever import Retriever, matches_filters
from ..data.datasets import KnowledgeBase

__all__ = ["FAQ_ROWS", "check_answer_or_search", "check_bind_pipeline", "check_csv_reader",
           "check_encode_embedder", "check_first_paragraphs_filter", "check_joined_context",
           "check_paired_p_value", "check_recommend_in_file", "check_swapped_score"]

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
    :class:`~course_lib.lab.systems.embedding_service.EmbeddingService`)?

    Builds ``cls(service.url + "/v2/encode")`` and compares its ``embed(texts)`` and
    ``embed_query(query)`` with what the service's embedder computes in this process.
    """
    from ...embeddings import HTTPEmbedder

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
        "长城在哪里？", _NODES)
    got = reranker("长城在哪里？", _NODES)
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

    >>> from course_lib.flow import INPUT, bind, pipeline
    >>> by_hand = lambda q: q.upper() + q
    >>> check_bind_pipeline(pipeline(str.upper, bind(str.__add__, INPUT)), by_hand, ["a", "b"])
    True
    >>> check_bind_pipeline(pipeline(str.upper, bind(str.__add__, "a")), by_hand, ["a", "b"])
    "for 'b' the pipeline gave 'Ba', the plain function 'Bb'"
    """
    from ...flow import pipeline

    if not isinstance(chain, pipeline):
        return f"give a pipeline(...), not {chain!r:.60}"
    for question in questions:
        got, expected = chain(question), by_hand(question)
        if got != expected:
            return f"for {question!r} the pipeline gave {got!r:.60}, the plain function " \
                   f"{expected!r:.60}"
    return True


def _same_p(value: float, target: float) -> bool:
    """Is ``value`` the p-value ``target``, up to a learner's rounding (1 % of it)?"""
    return math.isclose(value, target, rel_tol=0.01, abs_tol=1e-12)


def _other_p_values(a: np.ndarray, b: np.ndarray) -> dict[str, list[float]]:
    """The p-values a learner may reach for instead of the exact McNemar test, by kind."""
    from scipy import stats

    n, won, lost = a.size, int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    hits_a, hits_b = int(a.sum()), int(b.sum())
    kinds: dict[str, list[float]] = {"one-sided": [], "approximate": [], "unpaired": []}
    if won + lost:
        kinds["one-sided"] = [stats.binomtest(won, won + lost, alternative=side).pvalue
                              for side in ("less", "greater")]
        chi = [(abs(won - lost) - c) ** 2 / (won + lost) for c in (1, 0)]  # McNemar's χ²
        kinds["approximate"] = [float(stats.chi2.sf(max(x, 0.0), 1)) for x in chi]
        kinds["approximate"] += [float(stats.ttest_rel(a, b).pvalue),
                                 float(stats.wilcoxon(a, b).pvalue)]
    table = [[hits_a, n - hits_a], [hits_b, n - hits_b]]
    kinds["unpaired"] = [float(stats.fisher_exact(table, alternative=side).pvalue)
                         for side in ("two-sided", "less", "greater")]
    if 0 < hits_a + hits_b < 2 * n:  # the χ² test of the 2×2 table of totals, = the z-test
        kinds["unpaired"] += [float(stats.chi2_contingency(table, correction=c).pvalue)
                              for c in (True, False)]
        pa, pb = hits_a / n, hits_b / n
        unpooled = math.sqrt((pa * (1 - pa) + pb * (1 - pb)) / n)
        if unpooled > 0:  # the z-test with each run's own variance
            kinds["unpaired"].append(float(2 * stats.norm.sf(abs(pa - pb) / unpooled)))
        kinds["unpaired"].append(float(stats.ttest_ind(a, b).pvalue))
    return {kind: [p for p in values if math.isfinite(p)] for kind, values in kinds.items()}


def check_paired_p_value(p_value: Any, a_hits: Sequence[float],
                         b_hits: Sequence[float]) -> bool | str:
    """Notebook 01: is ``p_value`` the two-sided exact McNemar p-value
    (:func:`course_lib.lab.measure.significance.mcnemar`) of two hit/miss columns on the same
    questions? A value that is an *unpaired* test of the two totals (Fisher's exact
    test, the χ² or z-test of two proportions, an independent t-test), a one-sided
    p-value or a paired approximation (McNemar's χ², the paired t-test) is named as
    such, without the code of the right one.

    >>> a, b = [1] * 90 + [0] * 10, [1] * 80 + [0] * 20   # 10 more hits, same questions
    >>> check_paired_p_value(0.001953125, a, b)
    True
    >>> check_paired_p_value(0.0734, a, b)[:47]
    '0.0734 is the p-value of an unpaired test: it c'
    >>> check_paired_p_value(None, a, b)
    'not attempted yet: store the p-value, a number, in p_value'
    """
    from ..measure.significance import mcnemar

    if p_value is None:
        return "not attempted yet: store the p-value, a number, in p_value"
    if isinstance(p_value, dict) and "p" in p_value:
        return "that is the test's whole result: store only its p-value (the 'p' entry)"
    if not is_number(p_value):
        return f"give the p-value as a number, not {p_value!r:.60}"
    if not 0 <= p_value <= 1:
        return f"a p-value is a probability, between 0 and 1; got {p_value!r}"
    a, b = np.asarray(a_hits, dtype=float), np.asarray(b_hits, dtype=float)
    test = mcnemar(a, b)
    if _same_p(p_value, test["p"]):
        return True
    others = _other_p_values(a, b)
    shown = f"{float(p_value):.3g}"
    if any(_same_p(p_value, p) for p in others["one-sided"]):
        return (f"{shown} is a one-sided p-value: it asks only whether one named pipeline "
                "beats the other. The direction was not fixed before looking, so count both "
                "directions (two-sided)")
    if any(_same_p(p_value, p) for p in others["unpaired"]):
        return (f"{shown} is the p-value of an unpaired test: it compares the two totals, "
                f"{int(a.sum())} and {int(b.sum())} hits of {a.size}, as if each pipeline "
                "had been asked its own questions. Both answered the same questions; most "
                "are easy for both or hard for both, and only the "
                f"{test['won'] + test['lost']} where they disagree say which is better. "
                "Use a paired test of the two hit columns")
    if any(_same_p(p_value, p) for p in others["approximate"]):
        return (f"{shown} comes from a paired test, the right idea, but an approximate one "
                f"(a χ² or normal curve): with only {test['won'] + test['lost']} questions "
                "where the pipelines disagree, use the exact test of two hit/miss columns")
    return (f"{shown} is not the exact McNemar p-value of these two hit columns: which "
            "questions carry the evidence, and how would they split if the pipelines were "
            "equally good?")


# ---------------------------------------------------------------- notebook 12
def threshold_rule_test(rule: Callable[[Sequence[float], float], float]) -> bool | str:
    """For the notebook's "try it": does ``rule(answerable_scores, max_wrong)`` decline
    (scores strictly below it) the same scores as :func:`choose_threshold` — the k-th
    lowest score, k = ⌊max_wrong · (n + 1)⌋? ``True``, or what is wrong.

    >>> threshold_rule_test(choose_threshold)
    True
    >>> threshold_rule_test(lambda scores, max_wrong: min(scores))
    'with max_wrong=0.05 and 100 scores it declines 0 of them; the rule declines 4 (k = 5)'
    """
    rng = np.random.default_rng(0)
    for n, max_wrong in ((100, 0.05), (40, 0.1), (7, 0.05), (250, 0.02)):
        scores = [round(float(x), 3) for x in rng.random(n)]
        threshold = rule(list(scores), max_wrong)
        if not isinstance(threshold, (int, float, np.floating, np.integer)):
            return f"it returned {type(threshold).__name__}, not a number"
        below = sum(s < threshold for s in scores)
        expected = sum(s < choose_threshold(scores, max_wrong) for s in scores)
        if below != expected:
            k = math.floor(max_wrong * (n + 1) + 1e-9)
            return (f"with max_wrong={max_wrong} and {n} scores it declines {below} of them; "
                    f"the rule declines {expected} (k = {k})")
    return True


def coverage_rule_test(best_coverage: Callable[[str, Sequence[DocNode]], float]
                       ) -> bool | str:
    """For the notebook's "try it": does ``best_coverage(question, candidates)`` give
    notebook 09's ``term_coverage(question, text)`` of the best candidate (0.0 for none)?
    ``True``, or the first case it gets wrong.

    >>> from course_lib.offline_llm import term_coverage
    >>> coverage_rule_test(lambda q, nodes: max((term_coverage(q, n.text) for n in nodes),
    ...                                         default=0.0))
    True
    >>> coverage_rule_test(lambda q, nodes: term_coverage(q, nodes[0].text))[:40]
    'best_coverage("故宫在哪个城市？", 2 candidates) '
    """
    from ...offline_llm import term_coverage

    cases = [("长城东起哪里？", ["长城东起山海关。"]),
             ("故宫在哪个城市？", ["长城东起山海关。", "故宫在北京，北京是一个城市。"]),
             ("西湖在哪里？", ["西湖在杭州。", "西湖的湖水很清。", "杭州有西湖。"]),
             ("《茶经》的作者是谁？", ["长城东起山海关。"]),
             ("长城东起哪里？", [])]
    for question, texts in cases:
        nodes = [DocNode(t, uid=f"n{i}") for i, t in enumerate(texts)]
        expected = max((term_coverage(question, t) for t in texts), default=0.0)
        try:
            got = best_coverage(question, nodes)
        except Exception as error:  # the learner's code raised: say on which case
            return (f'best_coverage("{question}", {len(nodes)} candidates) raised '
                    f"{type(error).__name__}: {error}")
        if not isinstance(got, (int, float, np.floating)) or abs(got - expected) > 1e-9:
            return (f'best_coverage("{question}", {len(nodes)} candidates) gave {got!r}, '
                    f"expected {expected:.3f} (the best term_coverage over the candidates' "
                    "texts, 0.0 without candidates)")
    return True


def anchored_rule_test(anchored: Callable[[str, str], float]) -> bool | str:
    """For the notebook's "try it": does ``anchored(question, line)`` give 0.0 unless the
    line holds every name of the question (``AnswerabilityDetector.anchors``), and else
    the unweighted share of the question's content words that are not function words
    (``content_terms`` minus ``function_words``) found in the line? ``True``, or the first
    case it gets wrong.

    >>> from course_lib.answerability import AnswerabilityDetector
    >>> from course_lib.offline_llm import content_terms
    >>> from course_lib.coverage import coverage
    >>> from course_lib.word_tags import function_words
    >>> def anchored(question, line):
    ...     if not all(n in line.lower() for n in AnswerabilityDetector.anchors(question)):
    ...         return 0.0
    ...     words = [w for w in content_terms(question) if w not in function_words(question)]
    ...     return coverage(dict.fromkeys(words), line, match="substring")
    >>> anchored_rule_test(anchored)
    True
    >>> anchored_rule_test(lambda q, line: 1.0).endswith("(names all in the line: False)")
    True
    """
    from ...answerability import AnswerabilityDetector, anchored_coverage
    from ...offline_llm import content_terms
    from ...word_tags import function_words

    cases = [("罗保铭本科毕业于哪所大学？", "山东女子学院是一所本科大学，位于济南。"),
             ("罗保铭本科毕业于哪所大学？", "罗保铭1977年毕业于天津师范大学中文系。"),
             ("罗保铭本科毕业于哪所大学？", "罗保铭曾任海南省省长。"),
             ("长城东起哪里？", "万里长城东起山海关。"),
             ("《茶经》的作者陆羽是哪里人？", "陆羽著有《茶经》，是复州竟陵人。"),
             ("《茶经》的作者陆羽是哪里人？", "陆羽是唐代人。")]
    for question, line in cases:
        names = AnswerabilityDetector.anchors(question)
        words = [w for w in content_terms(question) if w not in function_words(question)]
        expected = anchored_coverage(names, list(dict.fromkeys(words)), line)
        try:
            got = anchored(question, line)
        except Exception as error:  # the learner's code raised: say on which case
            return f'anchored("{question}", "{line}") raised {type(error).__name__}: {error}'
        if not isinstance(got, (int, float, np.floating)) or abs(got - expected) > 1e-9:
            return (f'anchored("{question}", "{line}") gave {got!r}, expected {expected:.3f} '
                    f"(names all in the line: {all(n in line.lower() for n in names)})")
    return True
