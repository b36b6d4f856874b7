"""Query rewriting and LLM-driven retrievers.

* :class:`ExpansionRetriever` — make a vague query specific, then retrieve.
* :class:`SubQuestionRetriever` — split a broad query into ≤ 3 concrete ones, retrieve
  each, union the results.
* :class:`MultiStepRetriever` — retrieve → answer → judge; unless the judge says the
  answer solves the question, rewrite the query and go again: at most ``max_steps`` steps
  in all, fewer if the rewrite comes back unchanged.
* :class:`MultiQueryRetriever` — ask the question three ways, retrieve each, merge
  (the Ascend RAG SDK's ``MultiQueryRetriever``).
* :class:`KeywordRetriever` — let the LLM pick ≤ 10 keywords, then BM25 over them (its
  ``BMRetriever``).

Each takes any ``retrieve(query) -> nodes`` function and any :class:`~course_lib.llm.ChatLLM`.

>>> from course_lib.llm import OfflineLLM
>>> SubQuestionRetriever(lambda q: [], OfflineLLM()).sub_questions("长城和故宫分别在哪里？")
['长城在哪里？', '故宫在哪里？']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._support.validation import check_int, validate_query, validate_topk
from .fusion import Retrieve, reciprocal_rank_fusion, union
from .llm import ChatLLM
from .node import DocNode


class ExpansionRetriever:
    """Rewrite the query into a more specific one, then retrieve with it.

    The rewriter sees the top ``feedback`` results of the original query (the offline
    stand-in adds their keywords: pseudo-relevance feedback). One is the safe default:
    keywords of lower-ranked, wrong passages drag the query away (notebook 02 measures it).
    """

    def __init__(self, retrieve: Retrieve, llm: ChatLLM, feedback: int = 1) -> None:
        self.retrieve, self.llm, self.feedback = retrieve, llm, feedback
        self.last_rewrite = ""

    def __call__(self, query: str) -> list[DocNode]:
        validate_query(query)
        context = [n.text for n in self.retrieve(query)[: self.feedback]]
        self.last_rewrite = self.llm.expand_query(query, context)
        return self.retrieve(self.last_rewrite)


class SubQuestionRetriever:
    """Retrieve for each sub-question (at most ``limit``) and union the results."""

    def __init__(self, retrieve: Retrieve, llm: ChatLLM, limit: int = 3) -> None:
        limit = check_int(limit, "limit", 1, 3)
        self.retrieve, self.llm, self.limit = retrieve, llm, limit

    def sub_questions(self, query: str) -> list[str]:
        return self.llm.sub_questions(validate_query(query), self.limit)[: self.limit]

    def __call__(self, query: str) -> list[DocNode]:
        return union([self.retrieve(q) for q in self.sub_questions(query)])


@dataclass
class Step:
    query: str
    answer: str
    solved: bool | None  # None: the judge's reply could not be read
    nodes: list[DocNode] = field(repr=False, default_factory=list)


@dataclass
class MultiStepResult:
    steps: list[Step]
    stopped_because: str  # "solved", "step limit" or "rewrite unchanged"

    @property
    def answer(self) -> str:
        return self.steps[-1].answer

    @property
    def nodes(self) -> list[DocNode]:
        return self.steps[-1].nodes


class MultiStepRetriever:
    """Retrieve → answer → judge → rewrite, in a loop; the first step uses the query as given.

    The loop stops for one of three reasons, in ``stopped_because``:

    * ``"solved"`` — the judge said the answer solves the question;
    * ``"rewrite unchanged"`` — the rewrite gave back the query just used, so the next step
      would retrieve the same nodes and (with a deterministic retriever and model) repeat
      this one;
    * ``"step limit"`` — ``max_steps`` steps were made (also when the last rewrite was
      unchanged). The rewrite made after the last step is not used.

    The judge's reply is *parsed*: "False" means no. (The reference chapter tested
    ``bool(reply)``, which is true for any non-empty reply, "False" included — so its
    loop always stopped after one step.) An unreadable reply counts as "not solved",
    and the step limit bounds the loop whatever the model says.
    """

    def __init__(self, retrieve: Retrieve, llm: ChatLLM, max_steps: int = 3,
                 context_size: int = 3) -> None:
        max_steps = check_int(max_steps, "max_steps", 1, 10)
        self.retrieve, self.llm = retrieve, llm
        self.max_steps, self.context_size = max_steps, context_size

    def run(self, query: str) -> MultiStepResult:
        validate_query(query)
        steps: list[Step] = []
        current = query
        for _ in range(self.max_steps):
            nodes = self.retrieve(current)
            contexts = [n.get_content() for n in nodes[: self.context_size]]
            answer = self.llm.answer(query, contexts)
            solved = self.llm.judge(query, answer)
            steps.append(Step(current, str(answer), solved, nodes))
            if solved is True:
                return MultiStepResult(steps, "solved")
            # Rewrite the latest query with what it found, so each step can add evidence.
            current = self.llm.expand_query(current, contexts)
            if current == steps[-1].query:  # stuck: the next step would retrieve the same nodes
                break
        return MultiStepResult(steps, "step limit" if len(steps) == self.max_steps
                               else "rewrite unchanged")

    def __call__(self, query: str) -> list[DocNode]:
        return self.run(query).nodes


class MultiQueryRetriever:
    """Ask the question ``n`` ways, retrieve each, merge by reciprocal rank, keep ``topk``."""

    def __init__(self, retrieve: Retrieve, llm: ChatLLM, n: int = 3, topk: int = 5,
                 feedback: int = 3) -> None:
        self.retrieve, self.llm, self.n = retrieve, llm, n
        self.topk, self.feedback = validate_topk(topk), feedback
        self.last_queries: list[str] = []

    def __call__(self, query: str) -> list[DocNode]:
        validate_query(query)
        first = self.retrieve(query)
        context = [n.text for n in first[: self.feedback]]
        self.last_queries = self.llm.query_variants(query, self.n, context)
        rankings = [first] + [self.retrieve(q) for q in self.last_queries[1:]]
        return reciprocal_rank_fusion(rankings, topk=self.topk)


class KeywordRetriever:
    """BM25 over the query's keywords (at most ``limit``, chosen by the LLM)."""

    def __init__(self, retrieve: Retrieve, llm: ChatLLM, limit: int = 10) -> None:
        limit = check_int(limit, "limit", 1, 10)
        self.retrieve, self.llm, self.limit = retrieve, llm, limit
        self.last_keywords: list[str] = []

    def __call__(self, query: str) -> list[DocNode]:
        validate_query(query)
        self.last_keywords = self.llm.keywords(query, limit=self.limit)[: self.limit]
        return self.retrieve(" ".join(self.last_keywords) or query)
