"""Comparing several pipelines on the same questions (course_lib.lab.measure.comparison): the
per-pipeline intervals, the paired rows against the baseline with Holm over all of them,
the refusals, and the printed report."""

import pytest

from course_lib.lab.measure.comparison import ALPHA, compare_results, format_comparison
from course_lib.lab.measure.significance import holm, mcnemar, proportion_interval

IDS = [f"q{i}" for i in range(10)]


def run(recall, mrr):
    return {"per_question": {"id": list(IDS), "recall@1": recall, "mrr@5": mrr}}


BASE = run([0] * 10, [0.2] * 10)
GOOD = run([1] * 9 + [0], [1.0] * 9 + [0.2])
SAME = run([0] * 10, [0.2] * 10)
ONLY = dict(metrics=["recall@1", "mrr@5"], tested=["recall@1", "mrr@5"])


def test_each_pipeline_gets_means_and_intervals():
    report = compare_results({"base": BASE, "good": GOOD}, **ONLY)
    assert report["questions"] == 10 and report["confidence"] == 0.95
    assert list(report["pipelines"]) == ["base", "good"]
    cell = report["pipelines"]["good"]["recall@1"]
    low, high = proportion_interval(9, 10)
    assert cell == {"mean": 0.9, "low": round(low, 4), "high": round(high, 4)}
    assert report["pipelines"]["base"]["mrr@5"] == {"mean": 0.2, "low": 0.2, "high": 0.2}


def test_rows_compare_every_other_pipeline_with_the_baseline_under_one_holm():
    report = compare_results({"base": BASE, "good": GOOD, "same": SAME}, **ONLY)
    rows = report["comparisons"]
    assert report["baseline"] == "base"
    assert [(r["pipeline"], r["baseline"], r["metric"], r["test"]) for r in rows] == [
        ("good", "base", "recall@1", "mcnemar"), ("good", "base", "mrr@5", "randomization"),
        ("same", "base", "recall@1", "mcnemar"), ("same", "base", "mrr@5", "randomization")]
    good = rows[0]
    assert (good["difference"], good["won"], good["lost"]) == (0.9, 9, 0)
    assert good["p"] == mcnemar(GOOD["per_question"]["recall@1"], [0] * 10)["p"]
    assert [r["p_holm"] for r in rows] == pytest.approx(holm([r["p"] for r in rows]))
    assert [r["verdict"] for r in rows] == ["higher", "higher", "no detectable difference",
                                            "no detectable difference"]
    assert rows[2]["p"] == 1.0 and rows[2]["difference"] == 0
    assert "Holm over the 4 tests above" in report["note"]


def test_a_named_baseline_and_the_sign_of_the_difference():
    report = compare_results({"good": GOOD, "base": BASE}, baseline="base", **ONLY)
    assert report["baseline"] == "base"
    assert [r["pipeline"] for r in report["comparisons"]] == ["good", "good"]
    flipped = compare_results({"good": GOOD, "base": BASE}, **ONLY)  # first is the baseline
    row = flipped["comparisons"][0]
    assert (row["pipeline"], row["difference"], row["won"], row["lost"]) == \
        ("base", -0.9, 0, 9)
    assert row["verdict"] == "lower"


def test_the_seed_fixes_the_bootstrap():
    noisy = run([1, 0, 1, 1, 0, 1, 0, 1, 1, 0], [1.0, 0.2, 0.5, 1.0, 0.2, 1, 0.33, 1, 1, 0.2])
    first = compare_results({"a": BASE, "b": noisy}, seed=3, **ONLY)
    assert compare_results({"a": BASE, "b": noisy}, seed=3, **ONLY) == first


@pytest.mark.parametrize("results, kwargs, message", [
    ({"base": BASE}, {}, "at least two pipelines' results, got 1"),
    ({"base": BASE, "good": GOOD}, {"baseline": "other"},
     r"baseline 'other' is not among the results \(base, good\)"),
    ({"base": BASE, "good": {"recall@1": 0.9}}, {}, "'good' has no per_question columns"),
    ({"base": BASE, "good": GOOD}, {"metrics": ["ndcg@10"]},
     r"'base' has no per-question column 'ndcg@10'; it has recall@1, mrr@5"),
    ({"base": BASE, "good": {"per_question": {**GOOD["per_question"], "id": IDS[::-1]}}}, {},
     "was not run on the same questions, in the same order"),
])
def test_refusals(results, kwargs, message):
    kwargs = {**ONLY, **kwargs}
    with pytest.raises(ValueError, match=message):
        compare_results(results, **kwargs)


def test_the_printed_report():
    text = format_comparison(compare_results({"base": BASE, "good": GOOD}, **ONLY))
    lines = text.splitlines()
    assert lines[0].startswith("10 questions; 95 % intervals: exact (Clopper–Pearson)")
    assert lines[1].split() == ["pipeline", "metric", "mean", "interval"]
    assert lines[2].split()[:3] == ["base", "recall@1", "0.0000"]
    assert lines[3].split()[:2] == ["mrr@5", "0.2000"]  # the name only on a pipeline's first
    assert lines[4].split()[:3] == ["good", "recall@1", "0.9000"]
    assert f"verdict: p_holm < {ALPHA}" in lines[7]
    assert lines[9].split()[:3] == ["good", "recall@1", "+0.9000"]
    assert lines[9].endswith("higher") and lines[-1].startswith("p: exact McNemar")
    without = format_comparison({**compare_results({"base": BASE, "good": GOOD}, **ONLY),
                                 "comparisons": []})
    assert "against the baseline" not in without and len(without.splitlines()) == 6


def test_tiny_p_values_print_in_scientific_notation():
    ids = [f"q{i}" for i in range(40)]
    hits = {"per_question": {"id": ids, "recall@1": [1] * 40}}
    misses = {"per_question": {"id": ids, "recall@1": [0] * 40}}
    report = compare_results({"m": misses, "h": hits}, metrics=["recall@1"],
                             tested=["recall@1"])
    assert report["comparisons"][0]["p"] < 1e-4
    assert "e-" in format_comparison(report).splitlines()[-2]
