"""Worked solution: 03 Built-in node groups.

The source of truth for `03_builtin_node_groups_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import (
      Retriever,
      SentenceSplitter,
      evaluate,
      knowledge_base_document,
      load_cmrc2018_kb,
)

kb = load_cmrc2018_kb()
cmrc = knowledge_base_document(kb)
cmrc.create_node_group("TinyChunk", SentenceSplitter, chunk_size=64, chunk_overlap=8)
tiny = evaluate(kb, Retriever(cmrc, "TinyChunk", "bm25_chinese", topk=5), span_recall=True)
fine = evaluate(kb, Retriever(cmrc, "FineChunk", "bm25_chinese", topk=5), span_recall=True)
tiny_span_recall_5 = tiny["span_recall@5"]
print("TinyChunk", tiny_span_recall_5, "FineChunk", fine["span_recall@5"])

# %%
# Smaller chunks contain the answer less often ...
assert all(len(n.text) <= 64 for n in cmrc.get_nodes("TinyChunk"))
assert tiny_span_recall_5 < fine["span_recall@5"]
# ... and even context relevance falls: 64 characters cut most sentences in pieces, and a piece of a
# sentence never matches a reference sentence exactly.
assert tiny["context_relevance@1"] < fine["context_relevance@1"]
print("context relevance@1: TinyChunk", tiny["context_relevance@1"],
      "FineChunk", fine["context_relevance@1"])
