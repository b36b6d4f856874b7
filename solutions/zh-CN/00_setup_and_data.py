"""参考解答：00 环境准备与数据。

`00_setup_and_data_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：max(kb.paragraphs, key=len)，然后数一数有多少个问题的段落就是它；元组是 (file_name, count)。
"""

# %%
from course_lib import load_cmrc2018_kb

kb = load_cmrc2018_kb()


def file_and_questions(paragraph):
    """(the file that holds ``paragraph``, how many questions have it as their gold paragraph)."""
    file_name = next(q.file_name for q in kb.questions if q.paragraph == paragraph)
    return file_name, sum(q.paragraph == paragraph for q in kb.questions)


longest = max(kb.paragraphs, key=len)
answer = file_and_questions(longest)
print(answer)

# %%
# The paragraph really is inside that file, and it is the longest one there.
file_name, number_of_questions = answer
assert longest in kb.files[file_name].split("\n")
assert all(len(p) <= len(longest) for p in kb.files[file_name].split("\n"))
assert number_of_questions >= 1


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answer it gives}."""
    shortest = min(kb.paragraphs, key=len)
    most_bytes = max(kb.paragraphs, key=lambda p: len(p.encode("utf-8")))
    longest_file = max(kb.files, key=lambda name: len(kb.files[name]))
    return {
        "You took the shortest paragraph (min); the exercise asks for the longest (max).":
            {"answer": file_and_questions(shortest)},
        "You measured length in UTF-8 bytes: Chinese characters take 3 bytes, digits and "
        "Latin letters 1, so another paragraph wins. Count characters instead.":
            {"answer": file_and_questions(most_bytes)},
        "You counted every question of that file; count only the questions whose gold "
        "paragraph is the longest one (q.paragraph == longest).":
            {"answer": (file_name, sum(q.file_name == file_name for q in kb.questions))},
        "That is the longest file, not the file that holds the longest paragraph: compare "
        "the paragraphs (kb.paragraphs), not the files.":
            {"answer": (longest_file, sum(q.file_name == longest_file for q in kb.questions))},
    }
