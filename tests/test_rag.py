from typing import Any

import pytest
from bad_inputs import (
    PATH_MUST,
    Case,
    all_nodes,
    char_overlap,
    clear_error_test,
)

from course_lib import (
    DocNode,
    Document,
    Retriever,
    load_sample,
    split_paragraphs,
)
from course_lib.lab.show.widgets import (
    answer_html,
    chat_panel,
    format_answer,
)
from course_lib.llm import OfflineLLM
from course_lib.llm_groups import LLMParser
from course_lib.rag import MultiPathRAG, answer_contains, llm_context_recall
from course_lib.rerank import Reranker


@pytest.fixture(scope="module")
def rag():
    texts, _ = load_sample()
    doc = Document(texts=texts)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    doc.create_node_group("qa", parent="paragraph",
                          transform=LLMParser(OfflineLLM(), task_type="qa"))
    paths = {"words": Retriever(doc, "paragraph", "bm25_chinese", topk=3),
             "characters": Retriever(doc, "paragraph", "bm25_char", topk=3)}
    return MultiPathRAG(paths, llm=OfflineLLM(),
                        reranker=Reranker(model=lambda q, t: [len(set(q) & set(x)) for x in t]),
                        qa_path=Retriever(doc, "qa", "bm25_chinese", topk=1), context_size=2)


def test_end_to_end_answer_with_provenance(rag):
    result = rag.ask("普洱属于哪一类茶？")
    assert answer_contains(result.answer, ["黑茶"]) and result.backend == "offline"
    assert result.contexts[0].found_by == {"qa pairs": 1}  # QA path bypasses the reranker
    paragraphs = [n for n in result.contexts if "qa pairs" not in n.found_by]
    assert len(paragraphs) <= 2 and all(n.found_by for n in paragraphs)
    assert result.queries == ["普洱属于哪一类茶？"]


def test_rewriting_adds_queries():
    texts, _ = load_sample()
    doc = Document(texts=texts)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    paths = {"words": Retriever(doc, "paragraph", "bm25_chinese", topk=3)}
    multi = MultiPathRAG(paths, llm=OfflineLLM(), rewrite="multi").ask("泡绿茶水温多少？")
    assert 2 <= len(multi.queries) <= 3
    with pytest.raises(ValueError, match="rewrite"):
        MultiPathRAG(paths, llm=OfflineLLM(), rewrite="magic")


def test_llm_context_recall_offline():
    llm = OfflineLLM()
    contexts = ["长城东起山海关，西至嘉峪关。现存城墙大多修建于明朝。"]
    assert llm_context_recall(llm, "长城东起山海关。现存城墙大多修建于明朝。", contexts) == 1.0
    assert llm_context_recall(llm, "长城东起山海关。长城建于唐朝末年。", contexts) == 0.5
    with pytest.raises(ValueError, match="reference is empty"):
        llm_context_recall(llm, "  ", contexts)


def test_text_html_and_widget_views(rag):
    result = rag.ask("长城东起哪里？")
    text = format_answer(result)
    assert text.startswith("Q: 长城东起哪里？") and "[offline stand-in]" in text
    assert "<details>" in answer_html(result, gold=result.contexts[-1].text)
    panel = chat_panel(rag)
    box, button = panel.children[0].children
    box.value = "谁写了《茶经》？"  # what pressing Enter does
    assert "陆羽" in panel.children[1].value
    box.value = " "
    assert "Type a question" in panel.children[1].value


def test_empty_candidates_still_answer():
    rag = MultiPathRAG({"none": lambda q: []}, llm=OfflineLLM())
    assert rag.ask("任何问题？").answer == "资料中没有找到答案"
    assert DocNode("x").found_by == {}


def test_chapter_rag_embeds_with_e5(cmrc_kb):
    from course_lib.lab.systems.chapter_system import chapter_rag

    rag = chapter_rag(cmrc_kb, llm=OfflineLLM())
    cosine = rag.retriever.paths["coarse chunks, cosine"]
    assert cosine.group_name == "CoarseChunk" and cosine.similarity.name == "cosine"
    assert {key: e.name for key, e in cosine.doc.embed.items()} == \
        {"e5": "multilingual-e5-small-q4-torch-v2"}
    assert rag.reranker.scorer.embedder.name == "multilingual-e5-small-q4-torch-v2"


# ==================================================================== bad inputs
# MultiPathRAG: its arguments and what its paths hand back.

def _rag(**kwargs: Any) -> MultiPathRAG:
    return MultiPathRAG({"all": all_nodes}, **{"llm": OfflineLLM(), **kwargs})


RAG_CASES: list[Case] = [
    # -- MultiPathRAG
    Case("fusion", "rag-context-size-zero", lambda tmp: _rag(context_size=0),
         ValueError, r"context_size must be an integer >= 1, got 0"),
    Case("fusion", "rag-unknown-rewrite", lambda tmp: _rag(rewrite="hyde"),
         ValueError, r"rewrite must be None, 'expand' or 'multi', got 'hyde'"),
    Case("fusion", "rag-reranker-a-string", lambda tmp: _rag(reranker="bge-reranker"),
         TypeError, r"reranker must be None or a Reranker .*got str"),
    Case("fusion", "rag-reranker-returns-texts",
         lambda tmp: _rag(reranker=Reranker(model=char_overlap, output_format="content")),
         ValueError, r"reranker must hand back nodes: build it with output_format=None"),
    Case("fusion", "rag-llm-a-string", lambda tmp: _rag(llm="gpt-4o"),
         TypeError, r"llm must be None \(the configured one\) or a chat LLM .*got str"),
    Case("fusion", "rag-qa-path-returns-none",
         lambda tmp: _rag(qa_path=lambda q: None).ask("长城东起哪里？"),
         TypeError, r"retrieval path 'qa pairs' \(.*\) returned None; " + PATH_MUST),
    Case("fusion", "rag-negative-workers", lambda tmp: _rag(max_workers=-2),
         ValueError, r"max_workers must be an integer >= 0, got -2"),
    Case("fusion", "rag-question-not-a-string", lambda tmp: _rag().ask(["长城", "故宫"]),
         TypeError, r"query must be a string, got list"),
]


test_bad_input_gets_a_clear_error = clear_error_test(RAG_CASES)
