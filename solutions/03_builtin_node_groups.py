"""Worked solution: 03 Built-in node groups.

The source of truth for `03_builtin_node_groups_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: on a fresh knowledge_base_document(kb): create_node_group('TinyChunk',
transform=SentenceSplitter(chunk_size=64, chunk_overlap=8)), then evaluate(kb, Retriever(...,
'TinyChunk', 'bm25_chinese', topk=5), span_recall=True) and read span_recall@5 and
context_relevance@1.

Marking tiny-chunks:
- 2 points: span recall@5 0.71 against FineChunk's 0.859: a 64-character chunk often cuts the
  answer span or parts it from the words the question shares with its sentence, and five tiny
  chunks carry half the text of five fine ones. Context relevance@1 0.6275 against 0.8057: the
  metric is the share of the chunk's sentences that occur *exactly* among the gold paragraph's
  sentences; 64 characters cut most sentences in pieces, and a piece never matches a whole
  sentence, so even a chunk of the gold paragraph scores low — the metric's blind spot, not
  more text off the topic.
- 1 point: one of the two explained, or both numbers with a vague reason ("too small").
- 0: the numbers only, or "smaller chunks are more relevant" against the measurement.
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
