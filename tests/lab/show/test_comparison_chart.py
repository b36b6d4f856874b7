"""The comparison chart of one notebook (course_lib.lab.show.comparison_chart), beside what
test_plots.py already shows: what record keeps (only recall@k and MRR@k, under its label, the
per-question columns of those only), that recorded() is a copy and lives in this process only
(a fresh Python sees nothing), that clear_recorded forgets the per-question columns too;
best_detectable names a best only when a paired test finds it detectably above the second;
and the figure's ordering, ties, panels, bar texts, bold tick and height.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from course_lib.lab.show import comparison_chart as chart_module
from course_lib.lab.show.comparison_chart import (
    best_detectable,
    clear_recorded,
    comparison_chart,
    record,
    recorded,
)
from course_lib.lab.show.figures import HIGHLIGHT, PLAIN


@pytest.fixture(autouse=True)
def _fresh():
    clear_recorded()
    yield
    clear_recorded()


def _column(hits: int, misses: int) -> list[float]:
    return [1.0] * hits + [0.0] * misses


# ---------------------------------------------------------------- record / recorded / clear


def test_record_keeps_only_the_metrics_under_its_label():
    record({"pipeline": "bm25", "recall@1": 0.4, "mrr@5": 0.5, "seconds": 3.0,
            "context_relevance@5": 0.7, "per_question": {
                "recall@1": (1, 0, 0), "id": ["q1", "q2", "q3"], "seconds": [1, 1, 1]}})
    record({"pipeline": "ignored name", "recall@1": 0.6}, label="e5")
    assert recorded() == {"bm25": {"recall@1": 0.4, "mrr@5": 0.5}, "e5": {"recall@1": 0.6}}
    assert chart_module._PER_QUESTION == {"bm25": {"recall@1": [1, 0, 0]}, "e5": {}}
    record({"pipeline": "bm25", "recall@1": 0.45})  # the same name again: replaced
    assert recorded()["bm25"] == {"recall@1": 0.45}
    assert chart_module._PER_QUESTION["bm25"] == {}
    with pytest.raises(KeyError):
        record({"recall@1": 0.5})  # no pipeline and no label: nothing to name it by


def test_recorded_is_a_copy():
    record({"pipeline": "a", "recall@1": 0.5})
    copy = recorded()
    copy["a"]["recall@1"] = 1.0
    copy["b"] = {"recall@1": 0.9}
    assert recorded() == {"a": {"recall@1": 0.5}}


def test_clear_forgets_the_per_question_columns_too():
    for name, hits in (("wide", 40), ("narrow", 30)):
        record({"pipeline": name, "recall@1": hits / 40,
                "per_question": {"recall@1": _column(hits, 40 - hits)}})
    assert best_detectable(recorded(), ["wide", "narrow"], "recall@1")[0]  # from record
    clear_recorded()
    assert recorded() == {}
    results = {"wide": {"recall@1": 1.0}, "narrow": {"recall@1": 0.75}}
    assert best_detectable(results, ["wide", "narrow"], "recall@1") == (
        False, "highest: wide (not tested: no per-question results)")


def test_what_is_recorded_stays_in_this_process():
    record({"pipeline": "here", "recall@1": 0.5})
    code = ("from course_lib.lab.show.comparison_chart import recorded, comparison_chart\n"
            "print(recorded(), comparison_chart().layout.annotations[0].text)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.startswith("{} Nothing recorded yet")
    assert recorded() == {"here": {"recall@1": 0.5}}


# ---------------------------------------------------------------- best_detectable


def test_a_best_is_named_only_when_it_is_detectably_best():
    results = {"a": {"per_question": {"mrr@5": [0.9, 0.8, 0.7, 1.0] * 10}},
               "b": {"per_question": {"mrr@5": [0.5, 0.4, 0.3, 0.6] * 10}},
               "c": {"per_question": {"mrr@5": [0.8, 0.8, 0.7, 1.0] + [0.9, 0.8, 0.7, 1.0] * 9}}}
    detectable, words = best_detectable(results, ["a", "b", "c"], "mrr@5")
    assert detectable and words.startswith("best: a, detectably above b (paired test, p ")
    # only the first two are compared: c, a's equal but on one question, is not looked at
    detectable, words = best_detectable(results, ["a", "c", "b"], "mrr@5")
    assert not detectable and "no detectable difference from c" in words
    assert words.endswith("none highlighted")
    same = {"x": {"per_question": {"recall@1": _column(20, 20)}},
            "y": {"per_question": {"recall@1": _column(20, 20)}}}
    assert best_detectable(same, ["x", "y"], "recall@1") == (
        False, "highest: x, no detectable difference from y (paired test, p 1): none highlighted")


def test_nothing_is_tested_without_two_equal_columns():
    results = {"a": {"per_question": {"recall@1": _column(30, 0)}},
               "b": {"per_question": {"recall@1": _column(0, 20)}},  # other questions
               "c": {"per_question": {"recall@5": _column(0, 30)}}}  # another metric only
    assert best_detectable(results, ["a", "b"], "recall@1")[0] is False
    assert best_detectable(results, ["a", "c"], "recall@1") == (
        False, "highest: a (not tested: no per-question results)")
    assert best_detectable(results, ["a"], "recall@1") == (False, "only a")
    assert best_detectable({}, [], "recall@1") == (False, "nothing to compare")


def test_a_first_detectably_below_the_second_is_not_called_best():
    results = {"worse": {"per_question": {"recall@1": _column(0, 30)}},
               "better": {"per_question": {"recall@1": _column(30, 0)}}}
    assert best_detectable(results, ["worse", "better"], "recall@1")[0] is False


# ---------------------------------------------------------------- the figure


def test_pipelines_are_sorted_by_the_first_metric_then_the_next_then_the_name():
    results = {"zeta": {"recall@1": 0.6, "recall@3": 0.7},
               "alpha": {"recall@1": 0.6, "recall@3": 0.7},
               "mid": {"recall@1": 0.6, "recall@3": 0.9},
               "low": {"recall@1": 0.2, "recall@3": 0.95}}
    figure = comparison_chart(results, ks=(1, 3))
    assert [trace.name for trace in figure.data] == ["recall@1", "recall@3"]  # no MRR: no panel
    assert list(figure.data[0].y) == ["mid", "alpha", "zeta", "low"]
    assert list(figure.layout.yaxis.tickvals) == ["mid", "alpha", "zeta", "low"]
    assert figure.layout.height == 150 + 34 * 4 and figure.layout.width == 820
    assert figure.layout.xaxis.range == (0.0, 1.0)  # a value under 0.5: the axis starts at 0
    assert "sorted by recall@1; highest: mid" in figure.layout.title.subtitle.text
    assert "bars start" not in figure.layout.title.subtitle.text
    # each bar carries its value, inside when it fills over a third of the panel
    assert list(figure.data[0].text) == ["0.600", "0.600", "0.600", "0.200"]
    assert list(figure.data[0].textposition) == ["inside"] * 3 + ["outside"]


def test_a_pipeline_without_a_metric_has_no_bar_in_its_panel():
    results = {"full": {"recall@1": 0.8, "recall@10": 0.9, "mrr@10": 0.85},
               "partial": {"recall@1": 0.7}}
    figure = comparison_chart(results, ks=(1, 10))
    panels = {trace.name: list(trace.y) for trace in figure.data}
    assert panels == {"recall@1": ["full", "partial"], "recall@10": ["full"],
                      "mrr@10": ["full"]}
    titles = [a.text for a in figure.layout.annotations]
    assert titles == ["recall@1", "recall@10", "MRR@10"]


def test_the_detectable_best_is_highlighted_in_bar_and_bold_name():
    results = {"`wide`": {"recall@1": 1.0, "per_question": {"recall@1": _column(40, 0)}},
               "narrow": {"recall@1": 0.5, "per_question": {"recall@1": _column(20, 20)}}}
    figure = comparison_chart(results, ks=(1,))
    assert list(figure.data[0].marker.color) == [HIGHLIGHT, PLAIN]
    assert list(figure.layout.yaxis.ticktext) == ["<b>wide</b>", "narrow"]  # no backticks
    subtitle = figure.layout.title.subtitle.text
    assert "detectably above narrow" in subtitle and "(highlighted)" in subtitle
    results["narrow"]["per_question"]["recall@1"] = _column(39, 1)  # one question apart
    results["narrow"]["recall@1"] = 39 / 40
    figure = comparison_chart(results, ks=(1,))
    assert set(figure.data[0].marker.color) == {PLAIN}
    assert list(figure.layout.yaxis.ticktext) == ["wide", "narrow"]
    assert "(highlighted)" not in figure.layout.title.subtitle.text


def test_without_results_the_chart_says_what_to_do():
    figure = comparison_chart({"x": {"seconds": 1.0}})  # nothing the chart can draw
    assert not figure.data
    assert figure.layout.annotations[0].text.startswith("Nothing recorded yet")
    assert comparison_chart().layout.annotations[0].text.startswith("Nothing recorded yet")
