"""Worked solution: 00 Setup and data.

The source of truth for `00_setup_and_data_solutions.ipynb`:
`make sync` generates that notebook from this file.
Cells are separated by `# %%` lines.
"""

# %%
from course_lib import load_cmrc2018_kb

kb = load_cmrc2018_kb()
longest = max(kb.paragraphs, key=len)
file_name = next(q.file_name for q in kb.questions if q.paragraph == longest)
number_of_questions = sum(q.paragraph == longest for q in kb.questions)
answer = (file_name, number_of_questions)
print(answer)

# %%
# The paragraph really is inside that file, and it is the longest one there.
assert longest in kb.files[file_name].split("\n")
assert all(len(p) <= len(longest) for p in kb.files[file_name].split("\n"))
assert number_of_questions >= 1
