"""Measuring a RAG system and switching its parts off (course_lib.rag, notebook 09)."""

import pytest

from course_lib import DocNode
from course_lib.lab.data.datasets import KnowledgeBase, Question
from course_lib.lab.data.question_bank import question_bank
from course_lib.lab.measure.rag_evaluation import (
    FULL_SYSTEM,
    ablation_table,
    ablations,
    format_ablation_table,
    measure_system,
    split_stored_asked,
)
from course_lib.llm import OfflineLLM
from course_lib.rag import MultiPathRAG, drop_contained
from course_lib.rerank import Reranker

TEA = "龙井属于绿茶。普洱属于黑茶。"
WALL = "长城东起山海关。长城西至嘉峪关。"
RIVER = "长江流经上海。黄河流经郑州。"
CHUNK = TEA + WALL  # a coarse chunk holding two paragraphs whole


def node(text, uid):
    return DocNode(text, uid=uid)


def question(qid, text, answer, paragraph):
    return Question(qid, text, [answer], [paragraph.index(answer)], f"p-{paragraph[:2]}",
                    paragraph, "a.txt")


QUESTIONS = [question("q1", "普洱属于哪一类茶？", "黑茶", TEA),
             question("q2", "长城西至哪里？", "嘉峪关", WALL),
             question("q3", "黄河流经哪里？", "郑州", RIVER)]


def overlap(query, texts):
    """A toy reranker: characters shared with the query."""
    return [len(set(query) & set(text)) for text in texts]


# ---------------------------------------------------------------- drop_contained
def test_a_contained_piece_is_dropped_and_its_container_takes_the_better_place():
    paragraph, chunk, other = node(TEA, "p"), node(CHUNK, "c"), node(RIVER, "r")
    assert [n.uid for n in drop_contained([paragraph, other, chunk])] == ["c", "r"]
    assert [n.uid for n in drop_contained([chunk, other, paragraph])] == ["c", "r"]
    # a chunk holding two kept paragraphs replaces both, at the first one's place
    wall = node(WALL, "w")
    assert [n.uid for n in drop_contained([paragraph, other, wall, chunk])] == ["c", "r"]


def test_identical_texts_keep_the_first_and_nothing_is_changed():
    first, second = node(TEA, "paragraph"), node(TEA, "chunk").with_score(9.0)
    kept = drop_contained([first, second])
    assert kept == [first] and kept[0] is first and second.score == 9.0
    first.found_by, second.found_by = {"words": 3}, {"words": 1, "cosine": 1}
    kept = drop_contained([first, second])
    assert kept == [first] and kept[0].found_by == {"words": 1, "cosine": 1}
    assert first.found_by == {"words": 3}  # a copy carries the merged provenance


def test_limit_stops_looking_once_full():
    paragraph, other, chunk = node(TEA, "p"), node(RIVER, "r"), node(CHUNK, "c")
    assert [n.uid for n in drop_contained([paragraph, other, chunk], limit=2)] == ["p", "r"]
    with pytest.raises(ValueError, match="limit"):
        drop_contained([paragraph], limit=0)
    with pytest.raises(TypeError, match="DocNodes"):
        drop_contained(["text"])


# ---------------------------------------------------------------- MultiPathRAG options
def test_dedupe_refills_the_context_with_the_next_candidate():
    paths = {"paragraphs": lambda q: [node(TEA, "p1")], "chunks": lambda q: [node(CHUNK, "c1")],
             "more": lambda q: [node(RIVER, "p3")]}
    plain = MultiPathRAG(paths, llm=OfflineLLM(), context_size=2)
    deduped = MultiPathRAG(paths, llm=OfflineLLM(), context_size=2, dedupe=True)
    assert [n.uid for n in plain.ask("普洱属于哪一类茶？").contexts] == ["p1", "c1"]  # TEA twice
    # c1 holds p1 and takes its place; the freed place goes to p3
    assert [n.uid for n in deduped.ask("普洱属于哪一类茶？").contexts] == ["c1", "p3"]
    rerank = MultiPathRAG(paths, llm=OfflineLLM(), context_size=2, dedupe=True,
                          reranker=Reranker(model=overlap))
    assert len(rerank.ask("长城西至哪里？").contexts) == 2
    with pytest.raises(TypeError, match="dedupe"):
        MultiPathRAG(paths, llm=OfflineLLM(), dedupe="yes")


def tiny_kb(questions=QUESTIONS):
    return KnowledgeBase({"a.txt": "\n".join([TEA, WALL, RIVER])}, list(questions),
                         [TEA, WALL, RIVER], [], [])


def test_a_stored_pair_brings_its_paragraph_with_qa_parents():
    from course_lib import Retriever

    bank = question_bank(tiny_kb(), questions=QUESTIONS[:1])
    assert [n.text for n in bank.get_nodes("stored_qa")] == ["普洱属于哪一类茶？"]
    qa = Retriever(bank, "stored_qa", "bm25_char", topk=1)
    paths = {"paragraphs": Retriever(bank, "paragraph", "bm25_char", topk=1)}
    with_source = MultiPathRAG(paths, llm=OfflineLLM(), qa_path=qa, qa_parents=True,
                               dedupe=True)
    result = with_source.ask("黄河流经哪里？普洱呢？")
    texts = [n.get_content() for n in result.contexts]
    assert texts[0].startswith("问：普洱属于哪一类茶？") and texts[1] == TEA
    assert result.contexts[1].found_by == {"qa pairs": 1}
    pair_only = MultiPathRAG(paths, llm=OfflineLLM(), qa_path=qa)
    assert TEA not in [n.text for n in pair_only.ask("黄河流经哪里？普洱呢？").contexts]


def test_question_bank_stores_only_the_questions_given():
    with pytest.raises(TypeError, match="Question objects"):
        question_bank(tiny_kb(), questions="普洱属于哪一类茶？")
    bank = question_bank(tiny_kb(), questions=QUESTIONS[1:])
    assert [n.metadata["question_id"] for n in bank.get_nodes("stored_qa")] == ["q2", "q3"]


# ---------------------------------------------------------------- split and measure
def test_split_is_seeded_disjoint_and_keeps_order():
    many = [question(f"q{i}", f"问题{i}？", "茶", TEA) for i in range(11)]
    stored, asked = split_stored_asked(many)
    assert (len(stored), len(asked)) == (6, 5)
    assert sorted(q.id for q in stored + asked) == sorted(q.id for q in many)
    assert [many.index(q) for q in stored] == sorted(many.index(q) for q in stored)
    assert split_stored_asked(many)[0] == stored  # same seed, same split
    assert split_stored_asked(many, seed=1)[0] != stored
    with pytest.raises(ValueError, match="empty"):
        split_stored_asked(many[:1])
    with pytest.raises(ValueError, match="stored_share"):
        split_stored_asked(many, stored_share=1.5)


def test_measure_system_columns():
    paths = {"chunks": lambda q: [node(CHUNK, "c1")], "river": lambda q: [node(RIVER, "r")]}
    rag = MultiPathRAG(paths, llm=OfflineLLM(), context_size=2)
    columns = measure_system(rag, QUESTIONS, keep_answers=True)
    assert columns["id"] == ["q1", "q2", "q3"]
    assert columns["gold_in_context"] == [1, 1, 1]  # the chunk holds TEA and WALL whole
    assert columns["answer_contains_gold"] == [1, 1, 1]
    assert columns["context_chars"] == [len(CHUNK) + len(RIVER)] * 3
    assert columns["context_pieces"] == [2, 2, 2]
    assert columns["answer"][0].question == "普洱属于哪一类茶？"
    only_river = MultiPathRAG({"river": lambda q: [node(RIVER, "r")]}, llm=OfflineLLM())
    assert measure_system(only_river, QUESTIONS)["gold_in_context"] == [0, 0, 1]
    with pytest.raises(ValueError, match="no questions"):
        measure_system(rag, [])
    with pytest.raises(TypeError, match="ask"):
        measure_system(object(), QUESTIONS)


# ---------------------------------------------------------------- ablations
def rag_with_everything():
    from course_lib import Retriever

    bank = question_bank(tiny_kb(), questions=QUESTIONS[:1])
    paths = {"words": Retriever(bank, "paragraph", "bm25_chinese", topk=2),
             "characters": Retriever(bank, "paragraph", "bm25_char", topk=2)}
    return MultiPathRAG(paths, llm=OfflineLLM(), reranker=Reranker(model=overlap),
                        qa_path=Retriever(bank, "stored_qa", "bm25_char", topk=1),
                        qa_parents=True, dedupe=True, context_size=1)


def test_ablations_switch_each_part_off_and_answer_as_built_alone():
    rag = rag_with_everything()
    systems = ablations(rag)
    assert list(systems) == [FULL_SYSTEM, "without words", "without characters",
                             "without the reranker", "without the QA path", "without dedupe",
                             "with rewrite 'expand'"]
    assert list(systems["without words"].retriever.paths) == ["characters"]
    assert systems["without the reranker"].reranker is None
    assert systems["without the QA path"].qa_path is None
    assert systems["with rewrite 'expand'"].rewrite == "expand"
    assert rag.reranker is not None and list(rag.retriever.paths) == ["words", "characters"]
    # shared memos change nothing: each variant answers as one built by hand
    by_hand = MultiPathRAG(dict(rag.retriever.paths), llm=OfflineLLM(), reranker=None,
                           qa_path=rag.qa_path, qa_parents=True, dedupe=True, context_size=1)
    for q in QUESTIONS:
        for _ in range(2):  # the second time from the memo
            shared = systems["without the reranker"].ask(q.question)
            assert [n.uid for n in shared.contexts] == \
                [n.uid for n in by_hand.ask(q.question).contexts]
        assert str(systems[FULL_SYSTEM].ask(q.question).answer) == str(rag.ask(q.question).answer)
    assert "without the rewriter" in ablations(systems["with rewrite 'expand'"])
    with pytest.raises(TypeError, match="MultiPathRAG"):
        ablations(lambda q: [])


def test_ablation_table_pairs_tests_and_adjusts_over_all_comparisons():
    ids = list(range(20))
    base = {"id": ids, "gold_in_context": [1] * 20, "answer_contains_gold": [1] * 20,
            "context_chars": [100] * 20, "context_pieces": [3] * 20}
    worse = dict(base, gold_in_context=[0] * 8 + [1] * 12, context_chars=[40] * 20)
    same = dict(base, answer_contains_gold=[0] + [1] * 19)
    report = ablation_table({"full": base, "worse": worse, "same": same})
    rows = {(r["pipeline"], r["metric"]): r for r in report["comparisons"]}
    assert len(rows) == 4
    lost = rows[("worse", "gold_in_context")]
    assert (lost["won"], lost["lost"], lost["difference"]) == (0, 8, -0.4)
    assert lost["p"] == pytest.approx(2 / 2 ** 8)
    assert lost["p_holm"] == pytest.approx(4 * 2 / 2 ** 8) and lost["verdict"] == "lower"
    assert rows[("same", "answer_contains_gold")]["verdict"] == "no detectable difference"
    assert report["context"]["worse"] == {"pieces": 3.0, "chars": 40.0}
    text = format_ablation_table(report)
    assert "no detectable difference" in text and "-60.0" in text
    with pytest.raises(ValueError, match="context_chars"):
        ablation_table({"full": base, "bare": {k: v for k, v in base.items()
                                               if k != "context_chars"}})
    with pytest.raises(ValueError, match="same questions"):
        ablation_table({"full": base, "other": dict(base, id=ids[::-1])})


# ---------------------------------------------------------------- chapter_rag
def test_chapter_rag_stored_questions_and_dedupe(cmrc_kb):
    from course_lib.lab.systems.chapter_system import chapter_rag

    default = chapter_rag(cmrc_kb, llm=OfflineLLM())
    assert (default.qa_parents, default.dedupe, default.reranker.topk) == (False, False, 3)
    stored, asked = split_stored_asked(cmrc_kb.questions[:40])
    rag = chapter_rag(cmrc_kb, llm=OfflineLLM(), qa_pairs=stored, dedupe=True)
    assert rag.qa_parents and rag.dedupe and rag.reranker.topk is None
    bank = rag.qa_path.doc.get_nodes("qapair")
    assert sorted(n.metadata["question_id"] for n in bank) == sorted(q.id for q in stored)
    for q in asked[:5]:
        texts = [n.text for n in rag.ask(q.question).contexts]
        assert not any(a in b for i, a in enumerate(texts) for j, b in enumerate(texts)
                       if i != j)
    assert chapter_rag(cmrc_kb, llm=OfflineLLM(), qa_pairs=None).qa_path is None
    with pytest.raises(ValueError, match="qa_pairs"):
        chapter_rag(cmrc_kb, llm=OfflineLLM(), qa_pairs="faq")
    with pytest.raises(ValueError, match="empty"):
        chapter_rag(cmrc_kb, llm=OfflineLLM(), qa_pairs=[])


# ---------------------------------------------------------------- stage ablations (09, CLI)
def test_stage_ablations_take_each_stage_out_on_the_same_questions():
    from course_lib.lab.cli import build_parser
    from course_lib.lab.measure.stage_ablations import (
        ablation_settings,
        remembered,
        stage_ablations,
        stage_variants,
    )

    kb = tiny_kb()
    runs = []
    texts = {"tea": [TEA, RIVER], "wall": [WALL, TEA], "river": [RIVER, WALL]}

    def path_of(name):
        def path(query):
            runs.append((name, query))
            return [node(t, f"{name}-{t[:2]}") for t in texts[name]]
        return remembered(path)

    paths = {name: path_of(name) for name in texts}
    reranker = Reranker(model=overlap, topk=2)
    assert list(stage_variants(paths, reranker)) == [
        "without tea", "without wall", "without river", "RRF instead of the reranker"]
    cases = stage_ablations("toy", kb, paths, reranker)
    assert [(c.baseline, c.metric) for c in cases[:2]] == [
        ("without tea", "recall@1"), ("without tea", "context_relevance@5")]
    assert len(cases) == 8 and {c.technique for c in cases} == {"multipath-rerank"}
    ids = [q.id for q in QUESTIONS]
    assert all(c.technique_result["per_question"]["id"] == ids
               and c.baseline_result["per_question"]["id"] == ids for c in cases)
    # each path ran once per question, however many variants read it
    assert sorted(runs) == sorted({(n, q.question) for n in texts for q in QUESTIONS})
    with pytest.raises(ValueError, match="reranker"):
        stage_ablations("toy", kb, paths)
    # the command line offers exactly the sets the module knows
    choices = next(a.choices for p in build_parser()._subparsers._group_actions[0].choices.items()
                   if p[0] == "ablations" for a in p[1]._actions if a.dest == "setting")
    assert list(choices) == list(ablation_settings())
