"""Tests of course_lib.flow, the pipeline language: pipeline, parallel (and .sum), bind with
INPUT and PREVIOUS, and the notes an error gains inside a pipeline. Complements
tests/test_fusion.py, which covers the reranker-shaped uses and the main error messages."""

import pytest

from course_lib.flow import INPUT, PREVIOUS, bind, parallel, pipeline


def fail_on_empty(text):
    if not text:
        raise LookupError("nothing to look up")
    return text


# ------------------------------------------------------------------ pipeline
def test_a_pipeline_applies_its_steps_in_order():
    assert pipeline(len)("abc") == 3
    assert pipeline(lambda x: x + 1, lambda x: x * 10)(1) == 20
    assert pipeline(lambda x: x * 10, lambda x: x + 1)(1) == 11


def test_a_pipeline_is_a_step_of_another():
    inner = pipeline(str.strip, str.upper)
    assert pipeline(inner, len)("  ab ") == 2
    assert pipeline(inner, inner)(" x ") == "X"


def test_an_error_in_the_first_step_names_step_one_and_the_function():
    with pytest.raises(LookupError, match="nothing to look up") as caught:
        pipeline(fail_on_empty, str.upper)("")
    assert caught.value.__notes__ == ["(raised in pipeline step #1, fail_on_empty)"]
    assert str(caught.value) == "nothing to look up"  # the message itself is untouched


def test_an_error_in_a_later_step_names_its_number():
    with pytest.raises(LookupError) as caught:
        pipeline(str.strip, str.lower, fail_on_empty)("   ")
    assert caught.value.__notes__ == ["(raised in pipeline step #3, fail_on_empty)"]


def test_a_lambda_step_is_named_lambda():
    with pytest.raises(ZeroDivisionError) as caught:
        pipeline(len, lambda n: 1 / n)("")
    assert caught.value.__notes__ == ["(raised in pipeline step #2, <lambda>)"]


def test_an_error_in_a_nested_pipeline_gains_one_note_per_level():
    inner = pipeline(str.strip, fail_on_empty)
    with pytest.raises(LookupError) as caught:
        pipeline(str.lower, inner)("  ")
    assert caught.value.__notes__ == ["(raised in pipeline step #2, fail_on_empty)",
                                      "(raised in pipeline step #2, pipeline)"]


def test_a_step_that_succeeds_adds_no_note_and_each_call_starts_afresh():
    steps = pipeline(fail_on_empty)
    with pytest.raises(LookupError):
        steps("")
    assert steps("ok") == "ok"


@pytest.mark.parametrize("step", [None, 3, ["f"]])
def test_a_non_callable_first_step_is_a_type_error_naming_its_type(step):
    with pytest.raises(TypeError, match=rf"pipeline step #1 must be callable, got "
                                        rf"{type(step).__name__}"):
        pipeline(step, str.upper)


def test_a_pipeline_given_a_list_of_steps_instead_of_the_steps_is_a_type_error():
    with pytest.raises(TypeError, match="step #1 must be callable, got list"):
        pipeline([str.strip, str.upper])


# ------------------------------------------------------------------ parallel
def test_parallel_gives_one_result_per_branch_in_order():
    assert parallel(str.upper)("ab") == ("AB",)
    assert parallel(str.lower, str.upper, len)("aB") == ("ab", "AB", 2)


def test_sum_adds_numbers_joins_strings_and_concatenates_lists():
    assert parallel(len, lambda s: 10).sum("abc") == 13
    assert parallel(str.upper, str.lower, str.upper).sum("a") == "AaA"
    assert parallel(lambda q: [q], lambda q: [], lambda q: [q, q]).sum("x") == ["x", "x", "x"]


def test_sum_of_one_branch_is_its_result():
    assert parallel(lambda q: [q]).sum("x") == ["x"]


def test_sum_is_a_new_parallel_and_leaves_the_original_as_it_was():
    both = parallel(str.upper, str.lower)
    summed = both.sum
    assert summed is not both
    assert both("Ab") == ("AB", "ab") and summed("Ab") == "ABab"


def test_parallel_without_branches_is_a_value_error():
    with pytest.raises(ValueError, match="parallel needs at least one branch"):
        parallel()
    with pytest.raises(ValueError, match="at least one branch"):
        parallel().sum  # noqa: B018 (the property is what is tested)


def test_parallel_inside_a_pipeline_is_named_parallel_in_an_error_note():
    with pytest.raises(LookupError) as caught:
        pipeline(str.strip, parallel(str.upper, fail_on_empty).sum)("  ")
    assert caught.value.__notes__ == ["(raised in pipeline step #2, parallel)"]


# ------------------------------------------------------------------ bind
def test_placeholders_print_as_their_names():
    assert repr(INPUT) == "INPUT" and repr(PREVIOUS) == "PREVIOUS"
    assert repr(bind(divmod, PREVIOUS, 3)) == "bind(divmod, PREVIOUS, 3)"


def test_input_is_the_input_of_each_call_not_of_the_first():
    echo = pipeline(len, bind(lambda n, asked: f"{asked}={n}", asked=INPUT))
    assert echo("ab") == "ab=2"
    assert echo("长城在哪") == "长城在哪=4"


def test_previous_may_be_a_keyword_argument():
    def rerank(query, nodes):
        return [f"{query}:{node}" for node in nodes]

    step = bind(rerank, query=INPUT, nodes=PREVIOUS)
    assert pipeline(str.split, step)("a b") == ["a b:a", "a b:b"]


def test_previous_put_in_the_middle_of_the_arguments():
    step = bind(lambda a, b, c: (a, b, c), "first", PREVIOUS, INPUT)
    assert pipeline(str.upper, step)("x") == ("first", "X", "x")


def test_input_may_be_used_twice():
    step = bind(lambda previous, a, b: previous + a + b, INPUT, b=INPUT)
    assert pipeline(str.upper, step)("x") == "Xxx"


def test_a_bound_first_step_gets_the_input_twice():
    # as the first step, the previous output is the pipeline's input itself
    assert pipeline(bind(lambda text, asked: text + asked, asked=INPUT))("ab") == "abab"


def test_a_bind_without_input_runs_alone_with_previous_where_it_says():
    assert bind(divmod, PREVIOUS, 3)(7) == (2, 1)
    assert bind(divmod, 7, PREVIOUS)(3) == (2, 1)


@pytest.mark.parametrize("bound", [
    bind(divmod, INPUT, PREVIOUS),
    bind(divmod, PREVIOUS, INPUT),
    divmod | bind(INPUT),
])
def test_a_bind_with_input_called_outside_a_pipeline_is_a_type_error(bound):
    with pytest.raises(TypeError, match=r"uses INPUT, the input of the pipeline it runs in: "
                                        r"use it as a step of pipeline\(\.\.\.\)"):
        bound(7)


def test_stage_or_bind_equals_bind_of_the_stage():
    written_as_chapter = pipeline(str.upper, (lambda text, asked: (text, asked)) | bind(INPUT))
    written_as_call = pipeline(str.upper, bind(lambda text, asked: (text, asked), INPUT))
    assert written_as_chapter("q") == written_as_call("q") == ("Q", "q")


def test_an_error_in_a_bound_step_keeps_its_type():
    def lookup(key, table):
        return table[key]

    with pytest.raises(KeyError) as caught:
        pipeline(str.strip, bind(lookup, table={}))(" k ")
    assert caught.value.args == ("k",)
    assert caught.value.__notes__ == ["(raised in pipeline step #2, bind(lookup, table={}))"]
