"""DRCD (the second knowledge base), its halves by article, script conversion, and the
three settings built from the files (:mod:`course_lib.lab.data.settings`)."""

import json
import os

import pytest

from course_lib import scripts
from course_lib.lab.data import datasets, settings
from course_lib.lab.data.datasets import (
    Article,
    DatasetUnavailableError,
    article_half,
    build_article_knowledge_base,
    load_squad,
    merge_squads,
    split_by_article,
)


@pytest.fixture(scope="module")
def drcd():
    try:
        return datasets.load_drcd()
    except DatasetUnavailableError as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"DRCD not available: {error}")


def test_drcd_loads_every_question_with_its_articles(drcd):
    assert (len(drcd.articles), len(drcd.paragraphs), len(drcd.questions)) == (378, 1000, 3493)
    assert not drcd.skipped and not drcd.dropped_answers
    assert sum(len(a.paragraph_ids) for a in drcd.articles) == 1000
    # every answer is where its offset says (repairs, if any, are counted in fixed_offsets)
    for q in drcd.questions:
        for start, answer in zip(q.answer_starts, q.answers, strict=True):
            assert q.paragraph[start:start + len(answer)] == answer
    print(drcd.summary())


def test_the_halves_split_by_article_deterministically_and_cover_everything(drcd):
    choose, report = (split_by_article(drcd, half) for half in ("choose", "report"))
    keys = {h: {a.key for a in part.articles} for h, part in (("c", choose), ("r", report))}
    assert not keys["c"] & keys["r"]
    assert len(keys["c"]) + len(keys["r"]) == 378
    assert len(choose.questions) + len(report.questions) == 3493
    assert 0.4 < len(choose.questions) / 3493 < 0.6
    # siblings never straddle the split: a paragraph's article decides its half
    article_of = {pid: a.key for a in drcd.articles for pid in a.paragraph_ids}
    assert all(article_half(article_of[q.paragraph_id]) == "choose" for q in choose.questions)
    # deterministic: the same file, the same split (no seed, no order dependence)
    again = split_by_article(datasets.load_drcd(), "choose")
    assert [q.id for q in again.questions] == [q.id for q in choose.questions]
    assert (len(choose.questions), len(report.questions)) == (1648, 1845)
    with pytest.raises(ValueError, match="half must be one of"):
        split_by_article(drcd, "test")


def test_the_split_does_not_depend_on_which_other_articles_exist():
    a = datasets.SquadSet([("x", "甲"), ("y", "乙")], [],
                          articles=[Article("1147", "", ["x"]), Article("1148", "", ["y"])])
    alone = datasets.SquadSet([("x", "甲")], [], articles=[Article("1147", "", ["x"])])
    assert (split_by_article(a, "report").paragraphs == split_by_article(alone, "report").paragraphs
            == [("x", "甲")])


def test_articles_as_files_reproduce_the_file_and_map_gold(drcd):
    kb = build_article_knowledge_base(drcd)
    assert len(kb.files) == 378 and len(kb.paragraphs) == 1000
    text_of = dict(drcd.paragraphs)
    for article in drcd.articles:
        name = next(n for n in kb.files if n.startswith(f"{article.key}_"))
        assert kb.files[name].split("\n") == [text_of[p] for p in article.paragraph_ids]
    for q in kb.questions:
        text = kb.files[q.file_name]
        assert text[q.paragraph_offset:q.paragraph_offset + len(q.paragraph)] == q.paragraph
        assert q.file_name.startswith(q.paragraph_id.split("-")[0] + "_")


def test_load_squad_records_articles_in_file_order(tmp_path):
    data = {"data": [
        {"id": "7", "title": "甲", "paragraphs": [{"context": "一。", "qas": []},
                                                 {"context": "二。", "qas": []}]},
        {"title": "乙", "paragraphs": [{"context": "三。", "qas": []}]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    squad = load_squad(path)
    assert squad.articles == [Article("7", "甲", ["甲_0", "甲_1"]), Article("a1", "乙", ["乙_0"])]


def test_merging_refuses_colliding_ids():
    a = datasets.SquadSet([("p", "甲")], [], articles=[Article("1", "", ["p"])])
    with pytest.raises(ValueError, match="share the paragraph id 'p'"):
        merge_squads(a, a)


def test_a_known_sentence_in_both_scripts():
    traditional = "臺灣大學圖書館的藏書數量為全臺之冠。"
    simplified = "台湾大学图书馆的藏书数量为全台之冠。"
    assert scripts.to_simplified(traditional) == simplified
    assert scripts.to_simplified(simplified) == simplified  # already Simplified: unchanged
    # s2t writes OpenCC's standard Traditional, which differs from Taiwan's in a few
    # characters (爲 for 為): a round trip is exact, the other direction is not
    assert scripts.to_traditional(simplified) == traditional.replace("為", "爲")
    assert scripts.to_simplified(scripts.to_traditional(simplified)) == simplified
    with pytest.raises(ValueError, match="config must be one of"):
        scripts.convert(traditional, "tw2sp")


def test_script_normalised_tokens_agree_across_scripts():
    from course_lib.text_tokens import chinese_tokens

    tokens = scripts.script_normalised(chinese_tokens)
    assert tokens("臺灣大學圖書館") == tokens("台湾大学图书馆")
    assert chinese_tokens("臺灣大學圖書館") != chinese_tokens("台湾大学图书馆")


def test_cross_script_questions_keep_their_gold(drcd):
    kb = build_article_knowledge_base(datasets.split_by_article(drcd, "choose"))
    converted = settings.cross_script(kb)
    assert [q.id for q in converted.questions] == [q.id for q in kb.questions]
    assert [q.paragraph for q in converted.questions] == [q.paragraph for q in kb.questions]
    pairs = zip(kb.questions, converted.questions, strict=True)
    changed = sum(a.question != b.question for a, b in pairs)
    assert changed > 0.95 * len(kb.questions)
    assert converted.files is kb.files


def test_the_settings_ask_their_half_of_one_knowledge_base(drcd):
    choose, report = settings.drcd_articles("choose"), settings.drcd_articles("report")
    assert choose.files == report.files and len(choose.files) == 378
    assert len(choose.questions) == 1648 and len(report.questions) == 1845
    mixed = settings.mixed_kb("report")
    assert len(mixed.paragraphs) == 256 + 1000
    assert sum(name.startswith("drcd_") for name in mixed.files) == 378
    asked = {q.id for q in mixed.questions}
    assert {q.id for q in report.questions} <= asked
    assert not {q.id for q in choose.questions} & asked
    with pytest.raises(ValueError, match="half must be one of"):
        settings.drcd_articles("all")


def test_the_wins_table_reads_as_the_claims_test_reads_it():
    """format_wins prints rows the verdict check of the notebooks can read back."""
    import sys
    from pathlib import Path

    from course_lib.lab.measure.reproduce import format_wins
    from course_lib.lab.measure.wins import Case, win_loss

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "repo"))
    from test_notebook_claims import TABLE_FOOTER, _rows

    ids = [f"q{i}" for i in range(40)]
    better = {"per_question": {"id": ids, "recall@1": [1] * 40}}
    worse = {"per_question": {"id": ids, "recall@1": [0] * 10 + [1] * 30}}
    rows = win_loss([Case("DRCD", "a", "b", better, worse), Case("CMRC", "a", "b", better, better)])
    text = format_wins({"rows": [{"lesson": "02 x", "report": rows[0]},
                                 {"lesson": "02 x", "report": rows[1]}]})
    assert TABLE_FOOTER in text
    assert _rows(text) == [("+0.250", "wins"), ("+0.000", "no detectable difference")]
    assert "0.750→1.000" in text and "      –" in text


def test_the_wins_table_corrects_each_question_set_apart():
    """Notebook 01's policy: rows on other questions are another Holm family, even in one table."""
    from course_lib.lab.measure.significance import holm
    from course_lib.lab.measure.wins import Case, win_loss

    def run(ids, hits):
        return {"per_question": {"id": ids, "recall@1": hits}}

    a_ids, b_ids = [f"a{i}" for i in range(40)], [f"b{i}" for i in range(40)]
    base = [0] * 40
    # on set A one clear win (10/0) and one nothing (0/0); on set B one borderline win (7/0)
    cases = [Case("A", "clear", "base", run(a_ids, [1] * 10 + [0] * 30), run(a_ids, base)),
             Case("A", "same", "base", run(a_ids, base), run(a_ids, base)),
             Case("B", "borderline", "base", run(b_ids, [1] * 7 + [0] * 33), run(b_ids, base))]
    rows = win_loss(cases)
    p = [row["p"] for row in rows]
    assert [row["p_holm"] for row in rows] == [*holm(p[:2]), *holm(p[2:])]
    # B's row alone: p 0.016, a win; pooled with A's rows it would be 0.031 — and the nothing
    # row of another question set must not change it at all
    assert rows[2]["p_holm"] == p[2] and rows[2]["verdict"] == "wins"
    assert holm(p)[2] != p[2]


def test_the_win_loss_footer_names_each_settings_questions_in_row_order():
    """A footer of bare counts sorted by size paired the wrong count with a setting."""
    from course_lib.lab.measure.wins import Case, format_win_loss, win_loss

    def run(n):
        return {"per_question": {"id": [f"q{i}" for i in range(n)], "recall@1": [1] * n}}

    cases = [Case("big", "a", "b", run(30), run(30)), Case("small", "a", "b", run(20), run(20))]
    footer = format_win_loss(win_loss(cases)).splitlines()[-1]
    assert footer.startswith("(questions: big 30; small 20) difference")
    same = format_win_loss(win_loss(cases[:1] * 2)).splitlines()[-1]
    assert same.startswith("(30 questions) difference")
