"""Worked solution: 02 Query rewriting.

The source of truth for `02_query_rewriting_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import Retriever, knowledge_base_document, load_cmrc2018_kb
from course_lib.llm import OfflineLLM
from course_lib.rewriting import SubQuestionRetriever

kb = load_cmrc2018_kb()
doc = knowledge_base_document(kb)
top2 = Retriever(doc, "paragraph", "bm25_chinese", topk=2)
sub = SubQuestionRetriever(Retriever(doc, "paragraph", "bm25_chinese", topk=1), OfflineLLM())
pairs = [(kb.questions[i], kb.questions[i + 500]) for i in range(0, 100, 2)]
plain_hits = sub_hits = 0
for a, b in pairs:
    question = a.question + b.question
    plain = {n.text for n in top2(question)}
    split = {n.text for n in sub(question)}
    plain_hits += a.paragraph in plain and b.paragraph in plain
    sub_hits += a.paragraph in split and b.paragraph in split
plain_share, sub_share = plain_hits / len(pairs), sub_hits / len(pairs)
print(plain_share, sub_share)

# %%
# Splitting lets each need claim its own slot.
assert sub_share > plain_share
