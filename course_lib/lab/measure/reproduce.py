"""Reproduce the reference chapter's recall tables, our numbers beside theirs.

The chapter's numbers (LazyLLM RAG course, ch. 7, CMRC 2018 trial) are typed in
below from its tables; ours are computed now, on the real data. A row whose setting
the chapter did not have shows "–" for the chapter. One table is not the chapter's at all:
``answerability`` (notebook 12) — can the system tell that the knowledge base lacks the
answer? — held-out AUROC and decline shares, from :mod:`.answerability_evaluation`.

>>> sorted(TABLES)[:3]
['chunks_vs_paragraphs', 'cut_off', 'query_rewriting']
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..data.datasets import HALVES, KnowledgeBase
from ..systems.pipelines import COSINE_CUT_OFF, PIPELINES, RERANK_CUT_OFF, USE_COSINE_CUT_OFF
from .answerability_tiers import answerability_possible, evaluate_answerability
from .article_tiers import evaluate_article_answerability
from .evaluation import KS, evaluate
from .significance import compare_pair, holm_family, interval
from .wins import format_p

Triple = tuple[float, float, float]
ALPHA = 0.05  # a difference is marked when its Holm-adjusted p-value is below this


@dataclass
class Row:
    label: str
    pipeline: str
    chapter: dict[str, Triple] = field(default_factory=dict)  # metric -> top 1/3/5


@dataclass
class Table:
    title: str
    metrics: tuple[str, ...]
    rows: list[Row]
    # Each row after the first is compared with the first, paired, on this metric.
    tested: str = "recall@1"


_CHUNKS = {"recall": (0.43, 0.47, 0.48), "context_relevance": (0.50, 0.20, 0.12)}
_PARAGRAPH_BM25 = {"recall": (0.94, 0.97, 0.98), "context_relevance": (0.86, 0.30, 0.18)}
_RR = ("recall", "context_relevance")

TABLES: dict[str, Table] = {
    "chunks_vs_paragraphs": Table(
        "Fixed chunks vs paragraphs (BM25, jieba words)", _RR, [
            Row("fixed 1024 chunks (characters)", "bm25-coarse", _CHUNKS),
            Row("fixed 1024 chunks (~GPT-2 tokens)", "bm25-coarse-gpt2", _CHUNKS),
            Row("paragraph group, LazyLLM's tokens", "bm25-paragraph-lazyllm", _PARAGRAPH_BM25),
            Row("paragraph group, our tokens", "bm25-paragraph", _PARAGRAPH_BM25),
        ]),
    "summaries": Table(
        "Paragraphs retrieved through their summaries (chapter: LLM summaries; ours: offline "
        "TextRank)", _RR, [
            Row("summary → paragraph, BM25", "bm25-summary-to-paragraph",
                {"recall": (0.83, 0.89, 0.90), "context_relevance": (0.76, 0.29, 0.17)}),
            Row("summary → paragraph, cosine (e5)", "cosine-summary-to-paragraph",
                {"recall": (0.89, 0.93, 0.94)}),
            Row("summary → paragraph, cosine (USE)", "cosine-summary-to-paragraph-use"),
        ]),
    "query_rewriting": Table(
        "Query rewriting on the paragraph group (BM25; offline rewriter)", ("recall",), [
            Row("off", "bm25-paragraph"),
            Row("multi-query: 3 phrasings, RRF", "bm25-paragraph-multiquery"),
            Row("expansion with the top hit's keywords", "bm25-paragraph-expansion"),
        ]),
    "similarity": Table(
        "Similarity on the paragraph group (chapter's cosine: bge-large-zh-v1.5; ours: "
        "multilingual-e5-small and USE)", _RR, [
            Row("BM25, jieba words", "bm25-paragraph", _PARAGRAPH_BM25),
            Row("BM25, characters", "bm25-char-paragraph"),
            Row("cosine, e5 (retrieval model)", "cosine-paragraph",
                {"recall": (0.92, 0.95, 0.97), "context_relevance": (0.84, 0.29, 0.18)}),
            Row("cosine, USE (sentence encoder)", "cosine-paragraph-use"),
            Row("hybrid: words + characters + cosine, RRF", "hybrid-rrf"),
        ]),
    "cut_off": Table(
        "Similarity cut-off: fewer, surer paragraphs (chapter: cosine > 0.4)", _RR, tested=
        "context_relevance@5", rows=[
            Row(f"cosine > {COSINE_CUT_OFF} (e5 scale)", "cosine-paragraph-cutoff",
                {"recall": (0.86, 0.88, 0.88), "context_relevance": (0.87, 0.87, 0.87)}),
            Row(f"cosine > {USE_COSINE_CUT_OFF} (USE scale)", "cosine-paragraph-use-cutoff"),
            Row(f"multi-path + reranker score > {RERANK_CUT_OFF}", "multipath-rerank-cutoff",
                {"recall": (0.86, 0.88, 0.88), "context_relevance": (0.87, 0.87, 0.87)}),
        ]),
    "reranking_mrr": Table(
        "MRR@k before and after reranking (chapter: bge-reranker-large; ours: offline)",
        ("mrr",), [
            Row("paragraph BM25 (chapter: unsorted)", "bm25-paragraph",
                {"mrr": (0.9411, 0.6132, 0.4468)}),
            Row("paragraph BM25 top 20 + reranker", "bm25-paragraph-rerank",
                {"mrr": (0.9411, 0.9704, 0.9741)}),
            Row("multi-path top 20×3 + reranker", "multipath-rerank",
                {"mrr": (0.9411, 0.9704, 0.9741)}),
        ], tested="mrr@5"),
}

# Choose on trial, report on dev: the settings of the tables above (the cut-offs, the
# reranker, the fusion) on questions and paragraphs nobody looked at while choosing them.
HELD_OUT_ROWS = [
    Row("BM25, jieba words", "bm25-paragraph"),
    Row("BM25, characters", "bm25-char-paragraph"),
    Row("cosine, e5", "cosine-paragraph"),
    Row("hybrid: words + characters + cosine, RRF", "hybrid-rrf"),
    Row("paragraph BM25 top 20 + reranker", "bm25-paragraph-rerank"),
    Row("multi-path top 20×3 + reranker", "multipath-rerank"),
]
HELD_OUT_BASELINE = "bm25-char-paragraph"  # the best single path on trial
HELD_OUT_METRICS = ("recall@1", "recall@5", "mrr@5", "ndcg@10")
CUT_OFF_ROWS = [
    Row(f"cosine > {COSINE_CUT_OFF} (e5 scale)", "cosine-paragraph-cutoff"),
    Row(f"cosine > {USE_COSINE_CUT_OFF} (USE scale)", "cosine-paragraph-use-cutoff"),
    Row(f"multi-path + reranker score > {RERANK_CUT_OFF}", "multipath-rerank-cutoff"),
]


ANSWERABILITY = "answerability"  # the table that is not a recall table (and not the chapter's)


# Where each upgrade wins (not the chapter's): each lesson's technique against its baseline
# in a setting where its mechanism should help, and in one where it should not
# (:mod:`course_lib.lab.data.settings`). Chosen on the choose half, reported on the report half.
@dataclass
class Claim:
    lesson: str
    setting: str  # a key of SETTINGS
    technique: str  # pipeline names
    baseline: str
    metric: str = "recall@1"


SETTINGS = ("CMRC", "DRCD articles", "DRCD, Simplified questions", "CMRC + DRCD")
WINS = [
    Claim("02 rewriting", "DRCD, Simplified questions", "bm25-paragraph-norm", "bm25-paragraph"),
    Claim("02 rewriting", "CMRC", "bm25-paragraph-norm", "bm25-paragraph"),
    Claim("03 chunk groups", "DRCD articles", "bm25-paragraph", "bm25-coarse",
          "context_relevance@1"),
    Claim("03 chunk groups", "DRCD articles", "bm25-paragraph", "bm25-coarse", "span_recall@5"),
    Claim("05 node-group tree", "DRCD articles", "bm25-sentence-to-paragraph", "bm25-sentence",
          "span_recall@1"),
    Claim("05 node-group tree", "DRCD articles", "bm25-sentence-to-paragraph", "bm25-paragraph",
          "span_recall@1"),
    Claim("06 tokenisation", "DRCD articles", "bm25-paragraph-norm", "bm25-paragraph"),
    Claim("06 tokenisation", "DRCD, Simplified questions", "bm25-char-paragraph",
          "bm25-paragraph"),
    Claim("06 tokenisation", "DRCD, Simplified questions", "cosine-paragraph", "bm25-paragraph"),
    Claim("07 cut-off", "CMRC + DRCD", "cosine-paragraph-cutoff", "cosine-paragraph",
          "context_relevance@5"),
    Claim("07 cut-off", "CMRC + DRCD", "cosine-paragraph-cutoff", "cosine-paragraph",
          "recall@5"),
    Claim("08 reranking", "DRCD articles", "bm25-paragraph-rerank", "bm25-paragraph"),
    Claim("08 reranking", "CMRC", "bm25-paragraph-rerank", "bm25-paragraph"),
    Claim("09 multi-path", "DRCD, Simplified questions", "multipath-rerank",
          "bm25-char-paragraph-norm"),
    Claim("09 multi-path", "CMRC + DRCD", "multipath-rerank",
          "bm25-char-paragraph-norm"),
    Claim("09 multi-path", "CMRC", "multipath-rerank",
          "bm25-char-paragraph-norm"),
]


def setting_kb(setting: str, half: str) -> KnowledgeBase:
    """The knowledge base of ``setting`` (:data:`SETTINGS`) asking ``half``'s questions;
    for CMRC the choose half is trial and the report half the held-out dev set."""
    from ..data.datasets import load_cmrc2018_kb, load_held_out_kb
    from ..data.settings import cross_script, drcd_articles, mixed_kb

    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    if setting == "CMRC":
        return load_cmrc2018_kb() if half == "choose" else load_held_out_kb()
    if setting == "CMRC + DRCD":
        return mixed_kb(half)
    kb = drcd_articles(half)
    return cross_script(kb) if setting == "DRCD, Simplified questions" else kb


def wins_report(done: dict[tuple[str, str], dict[str, dict[str, Any]]] | None = None,
                claims: list[Claim] | None = None,
                halves: tuple[str, ...] = ("choose", "report")) -> dict[str, Any]:
    """Each claim (default: all of :data:`WINS`) on each half: per half the rows of
    :func:`course_lib.lab.measure.wins.win_loss` (Holm over the claims of that half).
    ``done[(setting, half)]`` receives (and may already hold) each evaluation, keyed by
    pipeline, so that no pipeline runs twice on one knowledge base (the CMRC ones are
    the trial and held-out results of :func:`reproduce`). ``halves=("report",)`` skips
    the choose half (half the time; nothing is chosen in these rows)."""
    from .wins import Case, win_loss

    done = {} if done is None else done
    claims = WINS if claims is None else claims
    rows_of = {}
    for half in halves:
        cases = []
        for claim in claims:
            key = (claim.setting, half)
            if key not in done:
                done[key] = {}
            results = done[key]
            if claim.technique not in results or claim.baseline not in results:
                kb = _kb_cache(claim.setting, half)
                for name in (claim.baseline, claim.technique):
                    evaluate_once(kb, name, results,
                                  span_recall=True if claim.setting != "CMRC" else None)
            cases.append(Case(claim.setting, claim.technique, claim.baseline,
                              results[claim.technique], results[claim.baseline], claim.metric))
        rows_of[half] = win_loss(cases)
    rows = [{"lesson": claim.lesson, **{half: rows_of[half][i] for half in halves}}
            for i, claim in enumerate(claims)]
    return {"rows": rows}


_KBS: dict[tuple[str, str], KnowledgeBase] = {}


def _kb_cache(setting: str, half: str) -> KnowledgeBase:
    if (setting, half) not in _KBS:
        _KBS[(setting, half)] = setting_kb(setting, half)
    return _KBS[(setting, half)]


def evaluate_once(kb: KnowledgeBase, name: str, done: dict[str, dict[str, Any]],
                  span_recall: bool | None = None) -> dict[str, Any]:
    """``evaluate(kb, name)``, kept in ``done`` (with its rankings) so that no pipeline
    runs twice; a cut-off pipeline (``cut_off_of``) cuts its base's rankings.
    ``span_recall=True`` adds answer-span recall to every pipeline (articles as files,
    where paragraphs, chunks, sentences and whole articles are compared)."""
    if name not in done:
        spec = PIPELINES[name]
        base = (evaluate_once(kb, spec.cut_off_of[0], done, span_recall)
                if spec.cut_off_of else None)
        # intervals: only where a table shows them (held_out_report), not for every row
        done[name] = evaluate(kb, name, keep_rankings=True, base=base, with_intervals=False,
                              span_recall=span_recall)
    return done[name]


def reproduce(kb: KnowledgeBase, tables: list[str] | None = None,
              held_out: KnowledgeBase | None = None,
              results: dict[str, dict[str, Any]] | None = None,
              held_out_results: dict[str, dict[str, Any]] | None = None,
              wins: bool = False) -> dict[str, Any]:
    """Evaluate every row of the chosen tables (default: all, ``answerability`` last);
    returns a JSON-ready dict: ``tables`` (the recall tables, each row after the first
    compared with the first, paired — :func:`compare_with_first`), ``answerability``,
    and, given ``held_out`` (the dev knowledge base), ``held_out``: the same settings
    there (:func:`held_out_report`), and with ``wins=True`` also ``wins``: each lesson's
    claim on DRCD and CMRC, choose half and report half (:func:`wins_report`; minutes).
    ``results`` / ``held_out_results``: dicts that receive every evaluation on ``kb`` /
    ``held_out`` (with per-question columns and rankings), to reuse them afterwards."""
    started = time.perf_counter()
    unknown = sorted(set(tables or []) - set(TABLES) - {ANSWERABILITY})
    if unknown:
        raise ValueError(f"unknown table(s) {unknown}; choose from "
                         f"{sorted([*TABLES, ANSWERABILITY])}")
    chosen = tables or [*TABLES, ANSWERABILITY]
    results = {} if results is None else results
    report: dict[str, Any] = {"tables": {}}
    for key in chosen:
        if key == ANSWERABILITY:
            continue
        table = TABLES[key]
        for row in table.rows:
            evaluate_once(kb, row.pipeline, results)
        tests = compare_with_first([results[row.pipeline] for row in table.rows], table.tested)
        rows = [{"label": row.label, "pipeline": row.pipeline,
                 "chapter": {m: row.chapter.get(m) for m in table.metrics},
                 "ours": _summary(results[row.pipeline]), "vs_first": test}
                for row, test in zip(table.rows, tests, strict=True)]
        report["tables"][key] = {"title": table.title, "metrics": list(table.metrics),
                                 "tested": table.tested, "rows": rows}
    if held_out is not None:
        held_out_results = {} if held_out_results is None else held_out_results
        report["held_out"] = held_out_report(kb, held_out, results, held_out_results)
        if wins:
            report["wins"] = wins_report({("CMRC", "choose"): results,
                                          ("CMRC", "report"): held_out_results})
    if ANSWERABILITY in chosen:
        skipped = {"skipped": "too few paragraphs with questions to hold some out in 5 folds"}
        report[ANSWERABILITY] = (evaluate_answerability(kb) if answerability_possible(kb)
                                 else skipped)
        if held_out is not None and answerability_possible(held_out):
            report[ANSWERABILITY]["held-out dev"] = evaluate_answerability(held_out)
        if wins:  # whole articles: DRCD's tiers, chosen on one half, reported on the other
            report[ANSWERABILITY]["DRCD"] = {half: evaluate_article_answerability(half)
                                             for half in HALVES}
    report["seconds"] = round(time.perf_counter() - started, 2)
    return report


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    """An evaluation result without its per-question columns and rankings (for JSON)."""
    return {k: v for k, v in result.items() if k not in ("per_question", "rankings")}


def compare_with_first(results: list[dict[str, Any]], metric: str) -> list[dict[str, Any] | None]:
    """Each result after the first compared with the first on ``metric``, paired over
    the same questions (:func:`course_lib.lab.measure.significance.compare_pair`), with Holm's
    correction over the comparisons of the table (``p_holm``) and ``marked`` when that
    is below :data:`ALPHA`. The first row gets ``None``."""
    baseline = results[0]["per_question"][metric]
    tests: list[dict[str, Any]] = [compare_pair(r["per_question"][metric], baseline)
                                   for r in results[1:]]
    for test in holm_family(tests, ALPHA):
        test["marked"] = test["p_holm"] < ALPHA
    return [None, *tests]


def held_out_report(trial: KnowledgeBase, dev: KnowledgeBase,
                    trial_results: dict[str, dict[str, Any]] | None = None,
                    dev_results: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The settings chosen on trial, measured on ``dev``.

    ``rows``: each of :data:`HELD_OUT_ROWS` with its trial and dev means and 95 %
    intervals of :data:`HELD_OUT_METRICS`, and on dev its paired difference in recall@1
    from :data:`HELD_OUT_BASELINE` (Holm over the rows). ``cut_offs``: each tuned cut-off
    (:data:`CUT_OFF_ROWS`) with recall@5 and context relevance@5 on trial and on dev.
    """
    done = {} if trial_results is None else trial_results
    dev_done = {} if dev_results is None else dev_results
    on_dev = {row.pipeline: evaluate_once(dev, row.pipeline, dev_done) for row in HELD_OUT_ROWS}
    order = [HELD_OUT_BASELINE] + [r.pipeline for r in HELD_OUT_ROWS
                                   if r.pipeline != HELD_OUT_BASELINE]
    tests = dict(zip(order, compare_with_first([on_dev[n] for n in order], "recall@1"),
                     strict=True))
    rows = [{"label": row.label, "pipeline": row.pipeline,
             "trial": {m: evaluate_once(trial, row.pipeline, done)[m] for m in HELD_OUT_METRICS},
             "dev": {m: on_dev[row.pipeline][m] for m in HELD_OUT_METRICS},
             "dev_intervals": {m: [round(x, 4) for x in
                                   interval(on_dev[row.pipeline]["per_question"][m])]
                               for m in HELD_OUT_METRICS},
             "vs_baseline": tests[row.pipeline]} for row in HELD_OUT_ROWS]
    cut_offs = []
    for row in CUT_OFF_ROWS:
        cut_offs.append({"label": row.label, "pipeline": row.pipeline,
                         **{f"{split} {m}": result[m]
                            for split, result in (
                                ("trial", evaluate_once(trial, row.pipeline, done)),
                                ("dev", evaluate_once(dev, row.pipeline, dev_done)))
                            for m in ("recall@5", "context_relevance@5")}})
    return {"questions": len(dev.questions), "paragraphs": len(dev.paragraphs),
            "baseline": HELD_OUT_BASELINE, "rows": rows, "cut_offs": cut_offs}


_SHORT = {"recall@1": "R@1", "recall@5": "R@5", "mrr@5": "MRR@5", "ndcg@10": "nDCG@10",
          "context_relevance@5": "CR@5"}


def format_report(report: dict[str, Any], timing: bool = True) -> str:
    """Text tables, each cell ``chapter→ours`` at top 1/3/5 (several metrics joined by /),
    the last column each row's paired difference from the table's first row; then the
    held-out tables (trial→dev) and answerability."""
    out = []
    for table in report["tables"].values():
        metrics = table["metrics"]
        out.append(f"\n{table['title']} — {' / '.join(metrics)}")
        width = max(13 * len(metrics) - 1, 17)
        header = (f"{'setting':<40}" + "".join(f"{'top ' + str(k):>{width}}" for k in KS)
                  + f"{'vs row 1, ' + _SHORT[table['tested']]:>24}")
        out.append(header)
        out.append("-" * len(header))
        for row in table["rows"]:
            cells = []
            for i, k in enumerate(KS):
                parts = [_pair(row["chapter"][m], i, row["ours"][f"{m}@{k}"], m == "mrr")
                         for m in metrics]
                cells.append(f"{' / '.join(parts):>{width}}")
            out.append(f"{row['label']:<40}" + "".join(cells)
                       + f"{_difference(row['vs_first']):>24}")
    out.append("\ncells of the tables above: chapter→ours. Last column: ours minus the table's "
               "first row, paired over the same questions (exact McNemar for recall, sign-flip "
               "randomization for MRR and context relevance); * = Holm-adjusted p < 0.05 "
               "within the table; no * = no detectable difference.")
    if "held_out" in report:
        out.extend(_held_out_lines(report["held_out"]))
    if "wins" in report:
        out.extend(_wins_lines(report["wins"]))
    if ANSWERABILITY in report:
        out.extend(_answerability_lines(report[ANSWERABILITY]))
    if timing:
        out.append(f"\n{report['seconds']} s in all")
    return "\n".join(out)


def _difference(test: dict[str, Any] | None, digits: int = 3) -> str:
    """``+0.013 (p 0.015)*``: the paired difference, its (Holm) p-value, * if marked."""
    if test is None:
        return "(baseline)"
    p = test["p_holm"]
    shown = f"{p:.3f}" if p >= 0.001 else "<0.001"
    return f"{test['difference']:+.{digits}f} (p {shown}){'*' if test['marked'] else ' '}"


def _held_out_lines(held: dict[str, Any]) -> list[str]:
    """The held-out tables: each setting chosen on trial, then measured on dev."""
    baseline = next(r["label"] for r in held["rows"] if r["pipeline"] == held["baseline"])
    lines = [f"\nChosen on trial, reported on held-out dev (CMRC 2018 dev: its first "
             f"{held['paragraphs']} paragraphs, {held['questions']} questions) — trial→dev",
             f"{'setting':<42}{'recall@1 (dev: 95% interval)':>30}{'recall@5':>13}"
             f"{'mrr@5':>17}{'ndcg@10':>17}{'dev: R@1 vs ' + baseline:>30}"]
    lines.append("-" * len(lines[-1]))
    for row in held["rows"]:
        low, high = row["dev_intervals"]["recall@1"]
        cells = [f"{row['trial']['recall@1']:.3f}→{row['dev']['recall@1']:.3f} "
                 f"[{low:.3f}, {high:.3f}]"]
        cells += [f"{row['trial'][m]:.{d}f}→{row['dev'][m]:.{d}f}"
                  for m, d in (("recall@5", 3), ("mrr@5", 4), ("ndcg@10", 4))]
        lines.append(f"{row['label']:<42}{cells[0]:>30}{cells[1]:>13}{cells[2]:>17}"
                     f"{cells[3]:>17}{_difference(row['vs_baseline']):>30}")
    lines.append("\nCut-offs chosen on trial, reported on dev — trial→dev")
    lines.append(f"{'setting':<42}{'recall@5':>16}{'context_relevance@5':>22}")
    lines.append("-" * len(lines[-1]))
    for row in held["cut_offs"]:
        recall = f"{row['trial recall@5']:.3f}→{row['dev recall@5']:.3f}"
        relevance = (f"{row['trial context_relevance@5']:.3f}→"
                     f"{row['dev context_relevance@5']:.3f}")
        lines.append(f"{row['label']:<42}{recall:>16}{relevance:>22}")
    return lines


def format_wins(wins: dict[str, Any]) -> str:
    """:func:`wins_report`'s rows as a text table (the choose column "–" when skipped)."""
    return "\n".join(_wins_lines(wins)[1:])


def _wins_lines(wins: dict[str, Any]) -> list[str]:
    """Where each upgrade wins: per claim, the choose half's difference, then the report
    half's means, difference, interval, Holm-adjusted p and verdict."""
    lines = ["\nWhere each upgrade wins (not in the chapter) — chosen on the choose half, "
             "reported on the report half (DRCD test split by article; CMRC: trial → held-out dev)",
             f"{'lesson':<19}{'setting':<27}{'technique vs baseline':<50}{'metric':<20}"
             f"{'choose':>7}  {'report: baseline→technique, difference [95% interval]':<54}"
             f"{'p_holm':>7}  verdict"]
    lines.append("-" * (len(lines[-1]) + 16))
    for row in wins["rows"]:
        r = row["report"]
        choose = f"{row['choose']['difference']:>+7.3f}" if "choose" in row else f"{'–':>7}"
        p = format_p(r["p_holm"])
        cell = (f"{r['baseline_mean']:.3f}→{r['technique_mean']:.3f}, {r['difference']:+.3f} "
                f"[{r['low']:+.3f}, {r['high']:+.3f}]")
        lines.append(f"{row['lesson']:<19}{r['setting']:<27}"
                     f"{r['technique'] + ' vs ' + r['baseline']:<50}{r['metric']:<20}"
                     f"{choose}  {cell:<54}{p:>7}  {r['verdict']}")
    lines.append("difference = technique − baseline, paired over the same questions (exact "
                 "McNemar for hit/miss metrics, sign-flip otherwise); p_holm: Holm over the "
                 "report half's rows on the same questions; verdict from p_holm < 0.05")
    return lines


def _answerability_lines(result: dict[str, Any]) -> list[str]:
    """The answerability table (notebook 12): not the chapter's, so no "chapter→" cells."""
    title = ("\nAnswerability: does the knowledge base hold the answer at all? (not in the "
             "chapter) — per tier of unanswerable questions, each detector adding one signal")
    if "skipped" in result:
        return [title, f"skipped: {result['skipped']}"]
    lines = [title]
    parts = [("CMRC trial", result), ("CMRC held-out dev", result.get("held-out dev"))]
    parts += [(f"DRCD {half} half", part) for half, part in result.get("DRCD", {}).items()]
    if "articles" in result:  # reproduce --squad FILE on a set of many-paragraph articles
        parts.append(("the file's articles", result["articles"]))
    for split, part in parts:
        if part is None:
            continue
        unit = "articles" if "half" in part else "paragraphs"
        removed = (f"{part['removed_paragraphs']} paragraphs removed (seed {part['seed']}"
                   + (f"; {part['ambiguous']} sibling-kept questions left out, their answer "
                      "written in a sibling" if "ambiguous" in part else "") + ")")
        lines += [f"{split}: {removed}, {part['answerable']} answerable questions; "
                  f"thresholds chosen on calibration folds for ≤ {part['max_wrong']:.0%} "
                  f"wrongly declined, all numbers on the {part['folds']} held-out folds "
                  f"(by {unit[:-1]}; intervals: bootstrap over {unit})",
                  f"{'tier (unanswerable questions)':<30}{'detector':<32}{'AUROC':>8}"
                  f"{'[95% interval]':>18}{'declined':>10}{'wrongly':>9}"
                  f"{'AUROC change [95% interval]':>31}"]
        lines.append("-" * len(lines[-1]))
        for row in part["rows"]:
            tier = f"{row['tier']} ({row['unanswerable']})"
            low, high = row["auroc_interval"]
            change = ""
            if "auroc_change" in row:
                c_low, c_high = row["auroc_change_interval"]
                change = f"{row['auroc_change']:+.4f} [{c_low:+.4f}, {c_high:+.4f}]"
            lines.append(f"{tier:<30}{row['label']:<32}{row['auroc']:>8.4f}"
                         f"{f'[{low:.4f}, {high:.4f}]':>18}{row['declined']:>10.3f}"
                         f"{row['wrongly_declined']:>9.3f}{change:>31}")
    return lines

def _pair(chapter: Triple | None, i: int, ours: float, four_digits: bool) -> str:
    """The chapter printed 2 decimals (4 for MRR); ours get one more, to show small gaps."""
    digits = 4 if four_digits else 2
    theirs = "–" if chapter is None else f"{chapter[i]:.{digits}f}"
    return f"{theirs}→{ours:.{digits + (0 if four_digits else 1)}f}"
