"""reproduce marks a row only when its paired difference from the table's first row
survives Holm's correction; the held-out tables read trial→dev."""

import pytest
from scipy.stats import binomtest

from course_lib.lab.measure.reproduce import _difference, compare_with_first


def _result(hits):
    return {"per_question": {"recall@1": [float(h) for h in hits]}}


def test_compare_with_first_pair_each_row_with_the_first_and_correct_for_several_rows():
    baseline = [1] * 80 + [0] * 20
    better = [1] * 80 + [1] * 15 + [0] * 5        # 15 won, 0 lost
    noise = [1] * 78 + [0, 0] + [1, 1] + [0] * 18   # 2 won, 2 lost
    first, strong, weak = compare_with_first([_result(baseline), _result(better), _result(noise)],
                                      "recall@1")
    assert first is None
    assert (strong["won"], strong["lost"]) == (15, 0)
    assert strong["p"] == binomtest(15, 15, 0.5).pvalue
    # Holm over two tests: the smaller p is doubled, the larger is kept (never below it).
    assert strong["p_holm"] == pytest.approx(2 * strong["p"]) and strong["marked"]
    assert weak["p_holm"] == 1.0 and not weak["marked"]
    assert _difference(first) == "(baseline)"
    assert _difference(strong).startswith("+0.150 (p <0.001)*")
    assert _difference(weak) == "+0.000 (p 1.000) "
