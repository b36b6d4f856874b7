"""mcnemar_power: the seeded simulation of how often exact McNemar detects a difference."""

from __future__ import annotations

import math

import pytest

from course_lib.lab.measure.significance import mcnemar_power


def test_power_rises_with_the_number_of_questions():
    powers = [mcnemar_power(n, 0.01, 0.025, simulations=1000) for n in (250, 1000, 4000)]
    assert powers[0] < powers[1] < powers[2]
    assert powers[0] < 0.2 and powers[2] > 0.9


def test_without_a_difference_it_rejects_at_most_about_alpha():
    simulations = 4000
    slack = 3 * math.sqrt(0.05 * 0.95 / simulations)  # three standard errors of the share
    for n in (250, 1000, 4000):
        assert mcnemar_power(n, 0.0, 0.025, simulations=simulations) <= 0.05 + slack


def test_a_larger_difference_or_fewer_disagreements_is_easier_to_detect():
    assert mcnemar_power(1000, 0.02, 0.025) > mcnemar_power(1000, 0.01, 0.025)
    assert mcnemar_power(1000, 0.01, 0.025) > mcnemar_power(1000, 0.01, 0.05)


def test_it_is_seeded_and_the_sign_of_the_difference_does_not_matter():
    assert mcnemar_power(800, 0.01, 0.03, seed=3) == mcnemar_power(800, 0.01, 0.03, seed=3)
    assert mcnemar_power(2000, -0.01, 0.025) == pytest.approx(
        mcnemar_power(2000, 0.01, 0.025), abs=0.05)


def test_a_difference_every_question_shows_is_always_detected():
    assert mcnemar_power(100, 1.0, 1.0, simulations=20) == 1.0


@pytest.mark.parametrize(("args", "message"), [
    ((0, 0.01, 0.025), "n must be"), ((100, 0.03, 0.025), "needs at least"),
    ((100, 0.0, 0.0), "discordant_share"), ((100.5, 0.0, 0.1), "n must be")])
def test_bad_arguments_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        mcnemar_power(*args)
