"""Teaching: the exercises, their checks and answer keys, and the classroom built on them.

:mod:`.exercise_catalog` (what each exercise asks), :mod:`.answer_keys` and :mod:`.exercises`
(checks with hints in steps), :mod:`.try_it_checks` (the checks a notebook's "try it" cells
run on what the learner wrote), :mod:`.written_answers` (questions answered in words),
:mod:`.answer_space` (how many answers a self-check lets a learner try), :mod:`.classroom`
(an nbgrader course made from the notebooks), :mod:`.grading` and :mod:`.sandbox` (grades
computed outside the student's kernel). Imports the measuring rooms, never the pictures.
"""
