"""The widgets (course_lib.lab.show.widgets): bad input, each a clear error."""

from bad_inputs import TOPK, Case, clear_error_test

from course_lib.lab.data.datasets import KnowledgeBase
from course_lib.lab.show.widgets import explore, query_explorer, threshold_slider

# ==================================================================== bad inputs
# The widgets refuse what they cannot show, naming what to pass instead.

def _no_questions() -> KnowledgeBase:
    return KnowledgeBase(files={"a.txt": "长城很长。"}, questions=[], paragraphs=["长城很长。"],
                         skipped=[], fixed_offsets=[])


_SWEEP_ROW = {"cut_off": 0.5, "recall@3": 0.9, "context_relevance@3": 0.5, "mean_kept": 2.0}


WIDGET_CASES: list[Case] = [
    # -- widgets
    Case("fusion", "query-explorer-without-questions",
         lambda tmp: query_explorer(_no_questions()),
         ValueError, r"query_explorer needs a knowledge base with questions \(kb.questions is "
                     r"empty\): load one with questions .* or call explore\(kb, "),
    Case("fusion", "explore-topk-zero",
         lambda tmp: explore(_no_questions(), "长城", topk=0), ValueError, TOPK + "0"),
    Case("fusion", "explore-nan-cut-off",
         lambda tmp: explore(_no_questions(), "长城", cut_off=float("nan")),
         ValueError, r"cut_off must be a number, got nan"),
    Case("fusion", "threshold-slider-no-rows", lambda tmp: threshold_slider([]),
         ValueError, r"sweep_rows must be a non-empty list of rows"),
    Case("fusion", "threshold-slider-wrong-k", lambda tmp: threshold_slider([_SWEEP_ROW], k=5),
         ValueError, r"sweep_rows lack \['recall@5', 'context_relevance@5'\] for k=5: pass the k "
                     r"the sweep was run with"),
]


test_bad_input_gets_a_clear_error = clear_error_test(WIDGET_CASES)
