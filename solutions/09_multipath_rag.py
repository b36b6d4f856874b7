"""Worked solution: 09 Multi-path RAG.

The source of truth for `09_multipath_rag_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import load_cmrc2018_kb
from course_lib.llm import OfflineLLM
from course_lib.pipelines import chapter_rag

kb = load_cmrc2018_kb()
sample_questions = kb.questions[::5]


def in_context_share(system):
    return sum(any(n.text == q.paragraph for n in system.ask(q.question).contexts)
               for q in sample_questions) / len(sample_questions)


rewrite_in_context = in_context_share(chapter_rag(kb, llm=OfflineLLM(), rewrite="multi"))
plain_in_context = in_context_share(chapter_rag(kb, llm=OfflineLLM()))
print(rewrite_in_context, plain_in_context)

# %%
# Retrieval already finds the paragraph; rewriting cannot add much and must not lose much.
assert rewrite_in_context >= plain_in_context - 0.02
assert rewrite_in_context > 0.95
