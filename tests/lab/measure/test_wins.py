"""Win/loss tables (course_lib.lab.measure.wins): the verdicts a paired test with Holm over the
rows on the same questions allows, the refusals, format_p and the printed table."""

import pytest

from course_lib.lab.measure.significance import holm, mcnemar
from course_lib.lab.measure.wins import VERDICTS, Case, format_p, format_win_loss, win_loss


def result(values, ids=None, metric="recall@1"):
    ids = ids or [f"q{i}" for i in range(len(values))]
    return {"per_question": {"id": ids, metric: values, "gold_rank": [1] * len(values)}}


def test_the_three_verdicts():
    many = [1] * 12 + [0] * 8
    none = [0] * 12 + [0] * 8
    rows = win_loss([Case("s", "new", "old", result(many), result(none)),
                     Case("s", "old", "new", result(none), result(many)),
                     Case("s", "same", "same", result(many), result(many))])
    assert [row["verdict"] for row in rows] == ["wins", "loses", "no detectable difference"]
    assert {row["verdict"] for row in rows} == set(VERDICTS)
    first = rows[0]
    assert (first["won"], first["lost"], first["difference"]) == (12, 0, 0.6)
    assert (first["technique_mean"], first["baseline_mean"], first["questions"]) == (0.6, 0, 20)
    assert first["test"] == "mcnemar" and first["p"] == mcnemar(many, none)["p"]
    assert (first["setting"], first["technique"], first["baseline"], first["metric"]) == \
        ("s", "new", "old", "recall@1")


def test_holm_corrects_over_the_rows_on_the_same_questions_only():
    six = [1] * 6 + [0] * 2  # 6 won, 0 lost: exact McNemar p = 2 / 2**6
    zero = [0] * 8
    p = 2 / 2 ** 6
    same = win_loss([Case("a", "t", "b", result(six), result(zero)),
                     Case("a", "t2", "b", result(six), result(zero))])
    assert [row["p"] for row in same] == [pytest.approx(p)] * 2
    assert [row["p_holm"] for row in same] == pytest.approx(holm([p, p]))
    assert [row["verdict"] for row in same] == ["no detectable difference"] * 2  # 0.0625
    other_ids = [f"x{i}" for i in range(8)]
    apart = win_loss([Case("a", "t", "b", result(six), result(zero)),
                      Case("b", "t", "b", result(six, other_ids), result(zero, other_ids))])
    assert [row["p_holm"] for row in apart] == [pytest.approx(p)] * 2
    assert [row["verdict"] for row in apart] == ["wins", "wins"]


def test_alpha_moves_the_line():
    six, zero = [1] * 6 + [0] * 2, [0] * 8
    assert win_loss([Case("a", "t", "b", result(six), result(zero))], alpha=0.01)[0][
        "verdict"] == "no detectable difference"


def test_a_non_binary_metric_gets_the_sign_flip_test():
    better = [0.5, 1.0, 0.33, 1.0, 0.5, 1.0, 1.0, 0.25, 1.0, 0.5]
    worse = [0.25, 0.5, 0.2, 0.5, 0.33, 0.5, 0.5, 0.2, 0.5, 0.25]
    row = win_loss([Case("s", "n", "o", result(better, metric="mrr@5"),
                         result(worse, metric="mrr@5"), metric="mrr@5")])[0]
    assert row["test"] == "randomization" and row["won"] == 10 and row["lost"] == 0
    assert row["verdict"] == "wins"


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="at least one Case"):
        win_loss([])
    ones = result([1, 0])
    with pytest.raises(ValueError, match="not run on the same questions in the same order"):
        win_loss([Case("s", "n", "o", ones, result([1, 0], ids=["q1", "q0"]))])
    with pytest.raises(ValueError, match=r"'o' has no per-question column 'mrr@5'; it has "
                                         r"recall@1$"):
        win_loss([Case("s", "n", "o", result([1, 0], metric="mrr@5"), ones, "mrr@5")])
    with pytest.raises(ValueError, match="'n' has no per_question columns"):
        win_loss([Case("s", "n", "o", {"recall@1": 0.5}, ones)])


@pytest.mark.parametrize("p, text", [(0.0, "<0.001"), (0.000999, "<0.001"), (0.001, "0.001"),
                                     (0.04567, "0.046"), (0.9994, "0.999"), (0.9995, "1"),
                                     (1.0, "1")])
def test_format_p(p, text):
    assert format_p(p) == text


def test_the_table_prints_each_row_and_counts_questions_per_setting():
    hits, misses = [1] * 10, [0] * 10
    rows = win_loss([Case("long setting", "new", "old", result(hits), result(misses)),
                     Case("s", "new", "old", result([1, 0, 1, 0]), result([1, 0, 1, 0]))])
    text = format_win_loss(rows, title="Table 1")
    lines = text.splitlines()
    assert lines[0] == "Table 1" and lines[1].startswith("setting     ")
    assert "long setting  new vs old" in lines[2] and lines[2].endswith("wins")
    assert "+1.000 [+1.000, +1.000]" in lines[2] and "<0.001" not in lines[2]
    assert lines[3].endswith("no detectable difference") and "     1       1" in lines[3]
    assert lines[4].startswith("(questions: long setting 10; s 4) difference = technique")
    assert lines[4].endswith("verdict from p_holm < 0.05")
