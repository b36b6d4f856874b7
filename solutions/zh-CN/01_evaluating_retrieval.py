"""参考解答：01 评测检索。

`01_evaluating_retrieval_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：建一个 topk=10 的检索器 Retriever，然后 evaluate(kb, retriever, ks=(5, 10))。

评分标准 top-10：
- 2 分：解读数字 —— recall@10 为 0.995，recall@5 为 0.989，所以 1,000 个问题中又有 6 个找回了
  标准段落 —— 并把它与代价相权衡，而这个代价每个问题都要付：多五个段落，生成器要读的字符数大约翻倍（还要为此
  付费，并可能被它们分散注意力）；上下文相关性大约减半。MRR@10（0.9771）几乎不高于 MRR@5（0.9763）：第一次
  出现在第 6 到 10 名的标准段落最多贡献 1/6，所以 6 个这样的问题最多贡献 0.001。结论：在 CMRC 上用这个检索器
  不值得（在 recall@5 偏低的地方，或者有重排序器在这 10 个中挑选时，才会值得）。
- 1 分：给出数字和结论，但没有讲代价，或者没有讲为什么 MRR 几乎不动。
- 0 分：“10 更好，因为召回率更高”，或者只有数字。

评分标准 paired-test：
- 2 分：既不需要检验，检验也提供不了信息：前 10 个包含前 5 个，所以在前 5 个中找到的问题不可能在前 10 个中
  丢失 —— 按构造，每一处分歧都只朝一个方向，而一个假定“两者都可能胜出”的检验只是把这一点重说一遍（6 比 0 给出 p 0.031）。
  不确定的是，在同类的其他问题上增益有多大：1,000 个中 6 个的精确置信区间（约 0.2 % 到 1.3 %），或者在 dev
  上做同样的测量。
- 1 分：说检验没有意义（或者说它总会得出“显著”），却没有讲两者的包含关系；或者讲了包含关系，却没有讲还剩下
  什么不确定。
- 0 分：运行或推荐这个检验，把它当作 10 更好的证据；或者不配对地比较两个总数。
"""

# %%
from course_lib import Retriever, evaluate, knowledge_base_document, load_cmrc2018_kb
from course_lib.lab.measure.evaluation import score_rankings

kb = load_cmrc2018_kb()
doc = knowledge_base_document(kb)
retriever = Retriever(doc, "paragraph", "bm25_chinese", topk=10)
result = evaluate(kb, retriever, ks=(5, 10))
recall_10, mrr_10 = result["recall@10"], result["mrr@10"]
print(recall_10, mrr_10, "vs recall@5", result["recall@5"])

# %%
# Five more paragraphs buy very little recall and cost twice the context.
assert result["recall@5"] <= recall_10 <= 1.0
assert recall_10 - result["recall@5"] < 0.02
assert mrr_10 >= result["mrr@5"]


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    top5 = evaluate(kb, Retriever(doc, "paragraph", "bm25_chinese", topk=5), ks=(5,))
    chunks = evaluate(kb, Retriever(doc, "CoarseChunk", "bm25_chinese", topk=10), ks=(10,))
    lazyllm = evaluate(kb, Retriever(doc, "paragraph", "bm25_lazyllm", topk=10), ks=(10,))
    worst_first = score_rankings(kb.questions,
                                 [retriever(q.question)[::-1] for q in kb.questions], ks=(10,))
    return {
        "These are recall@5 and MRR@5: the retriever must return 10 paragraphs, and evaluate "
        "must score at 10 as well as at 5.":
            {"recall_10": top5["recall@5"], "mrr_10": top5["mrr@5"]},
        "You retrieved CoarseChunk chunks (the naive baseline); the exercise retrieves whole "
        "paragraphs: the 'paragraph' group.":
            {"recall_10": chunks["recall@10"], "mrr_10": chunks["mrr@10"]},
        "You used LazyLLM's tokenisation (bm25_lazyllm); the exercise uses the course's "
        "bm25_chinese.":
            {"recall_10": lazyllm["recall@10"], "mrr_10": lazyllm["mrr@10"]},
        "Recall is right but MRR@10 is far too low: your list is ranked worst first. Keep the "
        "Retriever's order (highest score first).":
            {"recall_10": worst_first["recall@10"], "mrr_10": worst_first["mrr@10"]},
    }
