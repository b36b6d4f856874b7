"""Worked solution: 05 Node-group tree.

The source of truth for `05_node_group_tree_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import Retriever, evaluate, knowledge_base_document, load_cmrc2018_kb
from course_lib.llm import OfflineLLM
from course_lib.llm_groups import build_chapter_tree
from course_lib.offline_llm import split_sentences

kb = load_cmrc2018_kb()
cmrc = knowledge_base_document(kb)
build_chapter_tree(cmrc, OfflineLLM())
cmrc.create_node_group("lead", parent="block", transform=lambda text: split_sentences(text)[:1])


def to_blocks(group, topk=20):
    retriever = Retriever(cmrc, group, "bm25_chinese", topk=topk)
    return lambda question: cmrc.find("block")(retriever(question))[:5]


lead_recall_1 = evaluate(kb, to_blocks("lead"))["recall@1"]
summary_recall_1 = evaluate(kb, to_blocks("block-summary"))["recall@1"]
print(lead_recall_1, summary_recall_1)

# %%
# One lead sentence does about as well as the two most central sentences: in a Wikipedia
# paragraph the first sentence names the topic. Both fall well short of the whole block.
block_recall_1 = evaluate(kb, to_blocks("block"))["recall@1"]
assert all(n.text in n.parent.text for n in cmrc.get_nodes("lead"))
assert abs(lead_recall_1 - summary_recall_1) < 0.05
assert max(lead_recall_1, summary_recall_1) < block_recall_1 - 0.1
