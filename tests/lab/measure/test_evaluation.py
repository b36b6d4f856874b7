"""evaluate (course_lib.lab.measure.evaluation): bad input, each a clear error."""

from pathlib import Path
from typing import Any

from bad_inputs import Case, clear_error_test, squad_call

# ==================================================================== bad inputs
# A knowledge base with nothing to evaluate is refused, naming why.

def _evaluate_empty_squad(tmp_path: Path) -> Any:
    from course_lib.lab.data.datasets import build_knowledge_base
    from course_lib.lab.measure.evaluation import evaluate

    return evaluate(build_knowledge_base(squad_call({"data": []})(tmp_path)), "bm25-paragraph")


EVALUATION_CASES: list[Case] = [
    Case("datasets", "evaluate-on-a-squad-file-with-no-data", _evaluate_empty_squad, ValueError,
         r"kb: the knowledge base holds 0 paragraphs and 0 questions: nothing to evaluate "
         r"\(a SQuAD file whose \"data\" is empty"),
]


test_bad_input_gets_a_clear_error = clear_error_test(EVALUATION_CASES)
