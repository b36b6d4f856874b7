"""参考解答：10 基准报告。

`10_benchmark_report_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：summaries = summary_document(kb)；检索器 Retriever(summaries, 'summary', 'bm25_char', topk=5)；
small_to_big(retriever, summaries)（由摘要取回段落）；evaluate(kb, ...)，读出 recall@1。然后在留出的 dev 集上做同样的事
（summary_document(dev)），并在 dev 上用 compare_pair 比较字符的逐问题 recall@1 与
evaluate(dev, 'bm25-summary-to-paragraph') 的逐问题结果：dev_gain 是其差值，dev_low 是其配对 95 % 置信区间的下端。

评分标准 characters：
- 2 分：经由摘要检索时，trial 上用字符的 recall@1 为 0.787，用词为 0.735 —— 相差约 5 个百分点，而在完整段落上只差约
  1 个百分点（0.979 对 0.966）。摘要是两个抽取出来的句子：词项少，而且往往不包含问题所问的细节（笔记本 06：大多数
  摘要中没有答案），所以问题中每一个在摘要里写法或切分方式不同的词，都会让匹配损失更大的比例；字符仍能匹配这样一个词
  的一部分（“任”对应“担任”，“占地”对应“占地面积”：笔记本 06，第 5 节），而整词则什么也匹配不上。
- 1 分：有数字，但理由含糊（“字符更细”），或者有理由，但没有与完整段落上的结果比较。
- 0 分：只有数字。

评分标准 dev-test：
- 2 分：在 dev 上，字符 − 词 为 +0.066，配对 95 % 置信区间约为 +0.046 到 +0.087（赢 77 个，输 18 个）：远离 0。trial 上
  完整段落上的领先（0.979 对 0.966）是在课程探索过的那些问题上读出的，而且没有经受住报告针对结论数量所做的校正。
  置信区间说明这个收益离偶然可能有多远；配对利用了两行回答的是同一批问题这一点，所以只有两者结果不一致的问题才算数 ——
  比比较两个总数精确得多；dev：这一行是在 trial 上构建和查看的，所以 trial 上的数字只是一个假设，而没有参与任何选择的
  dev 证实了它。（另一种正确的说法：这是单独检验的一个结论；放在报告的结论族中，它要经过 Holm 校正，而且仍然成立
  （校正前 p 为 7e-10）。）
- 1 分：正确解读了置信区间，但几乎没有说明它为什么更有力。
- 0 分：比较两个总数，或者把 trial 当作确认。
"""

# %%
from course_lib import Retriever, evaluate, load_cmrc2018_kb
from course_lib.lab.data.datasets import load_held_out_kb
from course_lib.lab.measure.significance import compare_pair
from course_lib.lab.systems.pipelines import small_to_big, summary_document


def through_summaries(knowledge_base, similarity="bm25_char", topk=5):
    """Summaries matched with ``similarity``, each handing back its paragraph, evaluated."""
    summaries = summary_document(knowledge_base)
    retriever = Retriever(summaries, "summary", similarity, topk=topk)
    return evaluate(knowledge_base, small_to_big(retriever, summaries))


kb, dev = load_cmrc2018_kb(), load_held_out_kb()
characters = through_summaries(kb)  # explore on trial ...
char_summary_recall_1 = characters["recall@1"]
words = evaluate(kb, "bm25-summary-to-paragraph")
dev_characters, dev_words = through_summaries(dev), evaluate(dev, "bm25-summary-to-paragraph")
gap = compare_pair(dev_characters["per_question"]["recall@1"],  # ... report on dev, paired
                   dev_words["per_question"]["recall@1"])
dev_gain, dev_low = gap["difference"], gap["low"]
print(f"trial, through summaries, recall@1: characters {char_summary_recall_1}, "
      f"words {words['recall@1']}")
print(f"dev: characters − words {dev_gain:+.4f} [{dev_low:+.4f}, {gap['high']:+.4f}], "
      f"won {gap['won']}, lost {gap['lost']}, p {gap['p']:.2g}")

# %%
trial_gap = compare_pair(characters["per_question"]["recall@1"], words["per_question"]["recall@1"])
# Characters help through summaries on both sets (paired intervals above 0), by more points
# than on whole paragraphs (0.966 → 0.979 on trial; not tested against each other). A likely
# reason: a two-sentence summary has few words, so every question word it words differently
# costs more, and characters still match part of such a word (notebook 06).
assert trial_gap["low"] > 0 and dev_low > 0
assert char_summary_recall_1 < evaluate(kb, "bm25-char-paragraph")["recall@1"]


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    summaries = summary_document(kb)
    summaries_only = evaluate(kb, Retriever(summaries, "summary", "bm25_char", topk=5))
    paragraphs = evaluate(kb, Retriever(summaries, "paragraph", "bm25_char", topk=5))
    dev_paragraphs = evaluate(dev, "bm25-char-paragraph")
    whole = compare_pair(dev_paragraphs["per_question"]["recall@1"],
                         dev_words["per_question"]["recall@1"])
    return {
        "That is the report's row 'summary → paragraph, BM25' (jieba words): the new row "
        "matches the summaries on characters (the bm25_char similarity).":
            {"char_summary_recall_1": words["recall@1"]},
        "You scored the summaries themselves: a two-sentence summary never passes the hit "
        "rule against the whole gold paragraph. Hand back their paragraphs (small-to-big) "
        "before scoring.":
            {"char_summary_recall_1": summaries_only["recall@1"]},
        "That is BM25 on characters over whole paragraphs (the similarity table's row): "
        "retrieve from the 'summary' group of the summary document.":
            {"char_summary_recall_1": paragraphs["recall@1"]},
        "Those are trial's difference and interval: report on the held-out dev questions, "
        "which chose nothing.":
            {"dev_gain": trial_gap["difference"], "dev_low": trial_gap["low"]},
        "The gain is characters minus words through summaries; yours has the opposite sign.":
            {"dev_gain": -dev_gain, "dev_low": -gap["high"]},
        "On dev you compared characters over whole paragraphs, not through summaries: build "
        "the summaries of dev's own paragraphs.":
            {"dev_gain": whole["difference"], "dev_low": whole["low"]},
    }
