"""Worked solution: 04 Custom transforms.

The source of truth for `04_custom_transforms_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
import re

from course_lib import NodeTransform, Retriever, evaluate, knowledge_base_document, load_cmrc2018_kb


class SentenceWindows(NodeTransform):
    def __init__(self, size=2, stride=1):
        self.size, self.stride = size, stride

    def transform(self, node):
        sentences = [s for s in re.split(r"(?<=[。！？])", node.text) if s.strip()]
        last_start = max(len(sentences) - self.size, 0)
        return ["".join(sentences[i:i + self.size]) for i in range(0, last_start + 1, self.stride)]


kb = load_cmrc2018_kb()
cmrc = knowledge_base_document(kb)
recall_1 = {}
for size in (2, 3):
    cmrc.create_node_group(f"window{size}", parent="paragraph", transform=SentenceWindows,
                           size=size)
    small = Retriever(cmrc, f"window{size}", "bm25_chinese", topk=20)
    result = evaluate(kb, lambda q, small=small: cmrc.find("paragraph")(small(q))[:5])
    recall_1[size] = result["recall@1"]
direct = evaluate(kb, "bm25-paragraph")["recall@1"]
window3_recall_1 = recall_1[3]
print(recall_1, "direct:", direct)

# %%
# Larger windows carry more of the question's words: closer to the whole paragraph.
assert recall_1[2] < window3_recall_1 <= direct + 0.005
