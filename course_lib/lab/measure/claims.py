"""The report's claims about CMRC, each tested on trial and on the held-out dev set.

A *claim* is one change the course recommends — "characters instead of words", "add a
reranker" — stated as a new pipeline against the one it replaces, on one metric.
:func:`claims_table` tests every claim on one question set, paired (exact McNemar for
hit/miss metrics, sign-flip otherwise), and corrects the p-values by Holm **over the
claims of that set**: the claims on one question set are one family, because a reader
takes the whole list as the course's advice and should be misled by chance on none of
them. Trial and dev are two families: the same question is asked of each.

It does not choose anything: trial is where the course chose its settings, dev is where
nothing was chosen (notebook 10 and the README print both; the README quotes notebook
10's output, and a test checks that the two agree).

>>> [claim.label for claim in CLAIMS][:2]
['chunks → paragraphs', "LazyLLM's tokens → ours"]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..data.datasets import KnowledgeBase
from .reproduce import ALPHA, evaluate_once
from .significance import compare_pair, holm_family
from .wins import format_p


@dataclass(frozen=True)
class Claim:
    """One recommended change: ``new`` instead of ``old``, measured by ``metric``."""

    label: str
    metric: str
    new: str
    old: str


CLAIMS = [
    Claim("chunks → paragraphs", "recall@1", "bm25-paragraph", "bm25-coarse"),
    Claim("LazyLLM's tokens → ours", "recall@1", "bm25-paragraph", "bm25-paragraph-lazyllm"),
    Claim("words → characters", "recall@1", "bm25-char-paragraph", "bm25-paragraph"),
    Claim("BM25 words → e5 cosine", "recall@1", "cosine-paragraph", "bm25-paragraph"),
    Claim("characters → hybrid RRF", "recall@1", "hybrid-rrf", "bm25-char-paragraph"),
    Claim("multi-query rewriting", "recall@1", "bm25-paragraph-multiquery", "bm25-paragraph"),
    # expansion at recall@3, where notebook 02 saw it move gold paragraphs down
    Claim("expansion rewriting", "recall@3", "bm25-paragraph-expansion", "bm25-paragraph"),
    Claim("BM25 summaries → e5 summaries", "recall@1", "cosine-summary-to-paragraph",
          "bm25-summary-to-paragraph"),
    Claim("BM25 → BM25 + reranker", "mrr@5", "bm25-paragraph-rerank", "bm25-paragraph"),
    Claim("characters → multi-path + reranker", "recall@1", "multipath-rerank",
          "bm25-char-paragraph"),
    Claim("BM25 + reranker → multi-path + reranker", "recall@1", "multipath-rerank",
          "bm25-paragraph-rerank"),
]
# set-up embeds trial's summaries only: on dev the summaries' e5 claim is not tested
TRIAL_ONLY = frozenset({"cosine-summary-to-paragraph"})


def claims_table(kb: KnowledgeBase, done: dict[str, dict[str, Any]],
                 claims: Sequence[Claim] = CLAIMS, held_out: bool = False
                 ) -> list[dict[str, Any]]:
    """Each claim tested on ``kb``: a :func:`~course_lib.lab.measure.significance.compare_pair`
    row with ``claim``, ``metric``, ``p_holm`` (Holm over the rows returned) and
    ``verdict``. ``done`` keeps the pipelines' results (:func:`evaluate_once`), so a
    pipeline two claims share runs once; ``held_out=True`` leaves out the claims whose
    pipelines set-up did not prepare for the dev set (:data:`TRIAL_ONLY`)."""
    if not claims:
        raise ValueError("claims_table needs at least one Claim")
    kept = [c for c in claims if not (held_out and {c.new, c.old} & TRIAL_ONLY)]
    rows = []
    for claim in kept:
        new = evaluate_once(kb, claim.new, done)["per_question"][claim.metric]
        old = evaluate_once(kb, claim.old, done)["per_question"][claim.metric]
        rows.append({"claim": claim.label, "metric": claim.metric, **compare_pair(new, old)})
    return holm_family(rows, ALPHA)


def format_claims(rows: Sequence[dict[str, Any]], split: str) -> str:
    """The rows of :func:`claims_table` as text: one line per claim.

    >>> row = {"claim": "a → b", "metric": "recall@1", "difference": 0.01, "low": -0.002,
    ...        "high": 0.02, "won": 5, "lost": 2, "p": 0.45, "p_holm": 0.9,
    ...        "verdict": "no detectable difference"}
    >>> print(format_claims([row], "trial"))  # doctest: +NORMALIZE_WHITESPACE
    trial: new minus old, 95 % interval, won/lost, p, p after Holm over 1 claims
      a → b  recall@1 +0.010 [-0.002, +0.020]   5/2   p  0.450  Holm  0.900
      no detectable difference
    """
    width = max(len(row["claim"]) for row in rows)
    lines = [f"{split}: new minus old, 95 % interval, won/lost, p, p after Holm over "
             f"{len(rows)} claims"]
    for row in rows:
        lines.append(f"  {row['claim']:<{width}} {row['metric']:<8} {row['difference']:+.3f} "
                     f"[{row['low']:+.3f}, {row['high']:+.3f}]  {row['won']:>2}/{row['lost']:<2}  "
                     f"p {format_p(row['p']):>6}  Holm {format_p(row['p_holm']):>6}  "
                     f"{row['verdict']}")
    return "\n".join(lines)
