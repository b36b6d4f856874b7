"""The report's claims (course_lib.lab.measure.claims): the claims list, each claim tested
paired with Holm over the claims of one question set, the dev set's exclusions, and the
printed lines (pipelines' results stood in by hand-made per-question columns)."""

import pytest

from course_lib.lab.measure import claims as claims_module
from course_lib.lab.measure.claims import CLAIMS, TRIAL_ONLY, Claim, claims_table, format_claims
from course_lib.lab.measure.significance import compare_pair, holm
from course_lib.lab.systems.pipelines import PIPELINES

IDS = [f"q{i}" for i in range(12)]
SCORES = {"strong": [1] * 11 + [0], "weak": [0] * 12, "middle": [1] * 6 + [0] * 6}


@pytest.fixture
def runs(monkeypatch):
    """evaluate_once standing in: per-question columns by pipeline name; records each run."""
    ran = []

    def evaluate_once(kb, name, done):
        if name not in done:
            ran.append(name)
            done[name] = {"per_question": {"id": IDS, "recall@1": SCORES[name],
                                           "mrr@5": SCORES[name]}}
        return done[name]

    monkeypatch.setattr(claims_module, "evaluate_once", evaluate_once)
    return ran


def test_every_claim_names_registered_pipelines_and_a_known_metric():
    assert len({c.label for c in CLAIMS}) == len(CLAIMS)
    for claim in CLAIMS:
        assert claim.new in PIPELINES and claim.old in PIPELINES and claim.new != claim.old
        assert claim.metric in {"recall@1", "recall@3", "mrr@5"}
    assert TRIAL_ONLY <= {p for c in CLAIMS for p in (c.new, c.old)}
    with pytest.raises(AttributeError):
        CLAIMS[0].metric = "recall@5"  # frozen


def test_each_claim_is_a_paired_row_with_holm_over_the_set(runs):
    claims = [Claim("weak → strong", "recall@1", "strong", "weak"),
              Claim("weak → middle", "recall@1", "middle", "weak"),
              Claim("strong → middle", "mrr@5", "middle", "strong")]
    done = {}
    rows = claims_table(None, done, claims)
    assert [(r["claim"], r["metric"]) for r in rows] == [(c.label, c.metric) for c in claims]
    expected = [compare_pair(SCORES[c.new], SCORES[c.old]) for c in claims]
    assert [r["difference"] for r in rows] == [e["difference"] for e in expected]
    assert [r["p"] for r in rows] == [e["p"] for e in expected]
    assert [r["p_holm"] for r in rows] == pytest.approx(holm([e["p"] for e in expected]))
    # 11/0: p ≈ 0.001 survives Holm; 6/0: p = 0.031 × 3 does not; middle − strong loses 5/0
    assert [r["verdict"] for r in rows] == ["higher", "no detectable difference",
                                            "no detectable difference"]
    assert runs == ["strong", "weak", "middle"]  # a shared pipeline runs once
    assert set(done) == {"strong", "weak", "middle"}


def test_the_held_out_set_leaves_out_the_trial_only_claims(runs):
    only = next(iter(TRIAL_ONLY))
    SCORES[only] = SCORES["middle"]
    try:
        claims = [Claim("weak → strong", "recall@1", "strong", "weak"),
                  Claim("trial only", "recall@1", only, "weak")]
        assert [r["claim"] for r in claims_table(None, {}, claims)] == ["weak → strong",
                                                                        "trial only"]
        held = claims_table(None, {}, claims, held_out=True)
        assert [r["claim"] for r in held] == ["weak → strong"]
        assert held[0]["p_holm"] == held[0]["p"]  # a family of one
    finally:
        del SCORES[only]


def test_no_claims_is_refused(runs):
    with pytest.raises(ValueError, match="at least one Claim"):
        claims_table(None, {}, [])


def test_the_printed_lines_align_the_claims(runs):
    rows = claims_table(None, {}, [Claim("a → b", "recall@1", "strong", "weak"),
                                   Claim("a longer claim", "mrr@5", "middle", "weak")])
    lines = format_claims(rows, "dev").splitlines()
    assert lines[0] == ("dev: new minus old, 95 % interval, won/lost, p, p after Holm over "
                        "2 claims")
    assert lines[1].startswith("  a → b          recall@1 +0.917 [")
    assert lines[2].startswith("  a longer claim mrr@5    +0.500 [")
    assert " 11/0   " in lines[1] and lines[1].endswith("higher")
    assert "p  0.031" in lines[2] and "Holm  0.031" in lines[2]
