"""Choosing in folds (course_lib.lab.measure.folds): folds keep clusters whole, and the choice is
scored only on folds it did not see."""

from __future__ import annotations

import numpy as np
import pytest

from course_lib.lab.measure.folds import choose_in_folds, folds_by_cluster


def test_every_cluster_sits_in_one_fold_and_folds_are_about_equal():
    clusters = [f"p{k}" for k in np.random.default_rng(1).integers(0, 50, 400)]
    folds = folds_by_cluster(clusters, folds=5)
    by_cluster: dict[str, set[int]] = {}
    for cluster, fold in zip(clusters, folds, strict=True):
        by_cluster.setdefault(cluster, set()).add(fold)
    assert all(len(f) == 1 for f in by_cluster.values())
    counts = np.bincount([next(iter(f)) for f in by_cluster.values()], minlength=5)
    assert counts.max() - counts.min() <= 1  # clusters dealt in turn
    assert folds_by_cluster(clusters, folds=5) == folds  # seeded


def test_a_setting_lucky_on_one_fold_flatters_in_sample_but_not_out_of_fold():
    # 10 paragraphs of 20 questions; "steady" hits 14 of every paragraph's 20 (0.70);
    # "lucky" hits all of fold 0's paragraphs and 13 of 20 elsewhere: 0.72 overall, the best.
    clusters = [paragraph for paragraph in range(10) for _ in range(20)]
    fold = folds_by_cluster(clusters, folds=5)
    steady = [1.0 if q % 20 < 14 else 0.0 for q in range(200)]
    lucky = [1.0 if fold[q] == 0 or q % 20 < 13 else 0.0 for q in range(200)]
    result = choose_in_folds({"steady": steady, "lucky": lucky}, clusters, folds=5)
    assert (result["best"], result["in_sample"]) == ("lucky", 0.72)
    # without fold 0, lucky is 0.65 < 0.70: steady is chosen there and scores 0.70 where lucky
    # had 1.0; every other fold sees fold 0 and chooses lucky (0.7375), which scores 0.65 there
    assert result["chosen"] == ["steady", "lucky", "lucky", "lucky", "lucky"]
    assert result["out_of_fold"] == 0.66 < result["in_sample"]


def test_bad_inputs_name_what_is_wrong():
    with pytest.raises(ValueError, match="at least one setting"):
        choose_in_folds({}, ["a"])
    with pytest.raises(ValueError, match="one value per question"):
        choose_in_folds({"a": [1.0, 0.0]}, ["p1", "p2", "p3"])
    with pytest.raises(ValueError, match="needs at least that many clusters"):
        folds_by_cluster(["p1", "p1"], folds=2)
    with pytest.raises(ValueError, match="folds"):
        folds_by_cluster(["p1", "p2"], folds=1)
