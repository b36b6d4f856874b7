"""参考解答：03 内置节点组。

`03_builtin_node_groups_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：在一个全新的 knowledge_base_document(kb) 上：create_node_group('TinyChunk',
transform=SentenceSplitter(chunk_size=64, chunk_overlap=8))，然后用 TinyChunk 上的检索器评测：
evaluate(kb, Retriever(..., 'TinyChunk', 'bm25_chinese', topk=5), span_recall=True)，读出 span_recall@5 和
context_relevance@1。

评分标准 tiny-chunks：
- 2 分：span recall@5 为 0.71，FineChunk 为 0.859：64 个字符的分块常常切断答案片段，或者把它与所在句子中和问题
  相同的那些词分开；而且五个小分块装的文本只有五个 FineChunk 分块的一半。context relevance@1 为 0.6275，对比 0.8057：
  这个指标是分块的句子中*逐字*出现在标准段落句子里的比例；64 个字符把大多数句子切成了碎片，而碎片永远不会
  等于一个完整的句子，所以即使是标准段落里的分块，得分也很低 —— 这是指标的盲区，而不是多了偏离主题的文本。
- 1 分：两项中只解释了一项，或者给出两个数字但理由含糊（“太小了”）。
- 0 分：只有数字，或者与测量结果相反，声称“分块越小越相关”。
"""

# %%
from course_lib import (
    Retriever,
    SentenceSplitter,
    approx_gpt2_tokens,
    evaluate,
    knowledge_base_document,
    load_cmrc2018_kb,
)

kb = load_cmrc2018_kb()


def tiny_chunks(**splitter):
    """BM25 top 5 over a `TinyChunk` group built with ``splitter``'s settings, on a fresh
    Document (so that this can run again: a group name is taken once per Document)."""
    document = knowledge_base_document(kb)
    document.create_node_group("TinyChunk", transform=SentenceSplitter, **splitter)
    result = evaluate(kb, Retriever(document, "TinyChunk", "bm25_chinese", topk=5),
                      span_recall=True)
    return document, result


tiny_doc, tiny = tiny_chunks(chunk_size=64, chunk_overlap=8)
tiny_span_recall_5 = tiny["span_recall@5"]
tiny_context_relevance_1 = tiny["context_relevance@1"]
fine = evaluate(kb, Retriever(tiny_doc, "FineChunk", "bm25_chinese", topk=5), span_recall=True)
print("span_recall@5       : TinyChunk", tiny_span_recall_5, "FineChunk", fine["span_recall@5"])
print("context_relevance@1 : TinyChunk", tiny_context_relevance_1,
      "FineChunk", fine["context_relevance@1"])

# %%
# Smaller chunks contain the answer less often ...
assert all(len(n.text) <= 64 for n in tiny_doc.get_nodes("TinyChunk"))
assert tiny_span_recall_5 < fine["span_recall@5"]
# ... and even context relevance falls: 64 characters cut most sentences in pieces, and a piece
# of a sentence never matches a reference sentence exactly.
assert tiny_context_relevance_1 < fine["context_relevance@1"]


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    tokens = tiny_chunks(chunk_size=64, chunk_overlap=8, length_fn=approx_gpt2_tokens)[1]
    return {
        "Your span recall is at 1 (the top chunk only): the exercise asks for span recall@5, "
        "any of the top 5 chunks containing the answer.":
            {"tiny_span_recall_5": tiny["span_recall@1"]},
        "Your context relevance is at 5: the exercise asks for context relevance@1, the "
        "share of on-topic sentences in the top chunk alone.":
            {"tiny_context_relevance_1": tiny["context_relevance@5"]},
        "That is the chapter's recall@5 (edit similarity: a 64-character chunk never passes "
        "it), not span recall: ask evaluate for span recall too, and read span recall@5.":
            {"tiny_span_recall_5": tiny["recall@5"]},
        "These are FineChunk's numbers (128/12): build the new 64/8 group and retrieve from it.":
            {"tiny_span_recall_5": fine["span_recall@5"],
             "tiny_context_relevance_1": fine["context_relevance@1"]},
        "You counted GPT-2 tokens (the splitter's length function): 64 tokens are only about "
        "32 Chinese characters. The exercise counts characters, SentenceSplitter's default.":
            {"tiny_span_recall_5": tokens["span_recall@5"],
             "tiny_context_relevance_1": tokens["context_relevance@1"]},
    }
