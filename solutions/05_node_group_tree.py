"""Worked solution: 05 Node-group tree.

The source of truth for `05_node_group_tree_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.

Method: lead_doc.create_node_group('lead', parent='block', transform=lambda text:
split_sentences(text)[:1]), then evaluate(kb, to_blocks('lead', doc=lead_doc)) and read recall@1
and recall@5.

Marking lead:
- 2 points: lead 0.738 / 0.828 against the summary's 0.735 / 0.834: ahead by 3 questions at
  k = 1, behind by 6 at k = 5 — differences of a few questions in opposite directions, untested:
  about as good, so the cheaper stand-in (the first sentence, no model) does as well. Both are
  far below the whole block (0.966 / 0.989): one or two sentences keep what a Wikipedia
  paragraph is about (its lead names the topic; TextRank's central sentences too) but drop the
  details a question asks about, so BM25 has few of the question's words to match.
- 1 point: a verdict with the numbers but no reason for the gap to the block, or "the lead is
  better" read off a difference of 3 questions.
- 0: numbers only.
"""

# %%
from course_lib import Document, Retriever, evaluate, load_cmrc2018_kb, split_paragraphs
from course_lib.lab.systems.pipelines import small_to_big
from course_lib.offline_llm import split_sentences

kb = load_cmrc2018_kb()


def to_blocks(group, doc, similarity="bm25_chinese"):
    """Match the group's nodes (top 20), hand back their blocks."""
    return small_to_big(Retriever(doc, group, similarity, topk=20), doc, "block")


def lead_document(transform, parent="block"):
    """A fresh document with blocks and a 'lead' group made by ``transform``."""
    doc = Document(texts=kb.files)
    doc.create_node_group("block", transform=split_paragraphs)
    doc.create_node_group("lead", parent=parent, transform=transform)
    return doc


lead_doc = lead_document(lambda text: split_sentences(text)[:1])
result = evaluate(kb, to_blocks("lead", lead_doc))
lead_recall_1, lead_recall_5 = result["recall@1"], result["recall@5"]
print(lead_recall_1, lead_recall_5)

# %%
# One lead sentence does about as well as the summary's two most central sentences (the
# notebook's block-summary row: 0.735 / 0.834): in a Wikipedia paragraph the first
# sentence names the topic. Both fall well short of the whole block (0.966 / 0.989).
assert all(n.text in n.parent.text for n in lead_doc.get_nodes("lead"))
assert abs(lead_recall_1 - 0.735) < 0.05 and lead_recall_1 < 0.966 - 0.1


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    def answers(doc, retrieve=None):
        scored = evaluate(kb, retrieve or to_blocks("lead", doc))
        return {"lead_recall_1": scored["recall@1"], "lead_recall_5": scored["recall@5"]}

    return {
        "You kept the last sentence; the lead of a block is its first sentence.":
            answers(lead_document(lambda text: split_sentences(text)[-1:])),
        "You kept two sentences; the lead is the block's first sentence only.":
            answers(lead_document(lambda text: split_sentences(text)[:2])),
        "You cut the block at 。 only; a sentence also ends at ！, ？ and ；, as the course's "
        "sentence splitter cuts it.":
            answers(lead_document(lambda text: [text.split("。")[0]])),
        "You scored the lead sentences themselves; a sentence hits the gold paragraph only "
        "when it is most of it. Hand each lead back to the block it came from before scoring, "
        "as the tree's small-to-big step does.":
            answers(lead_doc, Retriever(lead_doc, "lead", "bm25_chinese", topk=20)),
    }
