"""参考解答：05 节点组树。

`05_node_group_tree_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：lead_doc.create_node_group('lead', parent='block', transform=lambda text:
split_sentences(text)[:1])，然后 evaluate(kb, to_blocks('lead', doc=lead_doc))，读出 recall@1 和 recall@5。

评分标准 lead：
- 2 分：首句（lead）为 0.738 / 0.828，摘要为 0.735 / 0.834：在 k = 1 时领先 3 个问题，在 k = 5 时落后 6 个 —— 差异只有
  几个问题，方向相反，也未经检验：两者大致一样好，所以更便宜的替身（首句，不需要模型）同样能用。两者都远低于
  整个块（0.966 / 0.989）：一两个句子保留了一个维基百科段落讲的是什么（首句点出主题；TextRank 选出的中心句也是），
  却丢掉了问题所问的细节，所以 BM25 能匹配的问题中的词很少。
- 1 分：有数字和结论，却没有说明与整个块之间差距的原因；或者从 3 个问题的差异中读出“首句更好”。
- 0 分：只有数字。
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
