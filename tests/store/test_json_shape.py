"""Shapes of parsed JSON (course_lib.store.json_shape): each kind of shape, the path a
message names (fields, items, keys, nested), booleans and non-finite numbers refused,
nothing converted."""

import math

import numpy as np
import pytest

from course_lib.store.json_shape import problem, type_name


def test_type_name_names_shapes_and_types():
    assert type_name(str) == "a string" and type_name(int) == "an integer"
    assert type_name(float) == "a number" and type_name(bool) == "true or false"
    assert type_name(None) == "null" and type_name(type(None)) == "null"
    assert type_name([int]) == "a list" and type_name({"a": int}) == "an object"
    assert type_name((str, [int], None)) == "a string or a list or null"
    assert type_name(list) == "a list" and type_name(dict) == "an object"
    assert type_name(complex) == "complex"  # a type without a JSON name: its own


@pytest.mark.parametrize("value, shape, expected", [
    (True, int, "v must be an integer, got True"),
    (False, float, "v must be a number, got False"),
    (2.0, int, "v must be an integer, got 2.0"),
    (math.inf, float, "v must be a number, got inf"),
    (math.nan, float, "v must be a number, got nan"),
    ("3", int, "v must be an integer, got '3'"),
    (3, str, "v must be a string, got 3"),
    (0, None, "v must be null, got 0"),
    (None, str, "v must be a string, got None"),
    ({"a": 1}, [int], "v must be a list, got an object"),
    ([1], {"a": int}, "v must be an object, got a list"),
    ("x", {str: int}, "v must be an object, got a string"),
    (1.5, (int, None), "v must be an integer or null, got a number"),
    ([1], (str, {"a": int}), "v must be a string or an object, got a list"),
])
def test_each_kind_of_difference_is_named(value, shape, expected):
    assert problem(value, shape, "v") == expected


@pytest.mark.parametrize("value, shape", [
    (3, float), (-0.0, float), (10 ** 30, int), (np.int64(3), int),
    ("", str), ([], [int]), ({}, {str: int}), (None, None), (None, (int, None)),
    ({"any": [None, {}]}, object), ([1, 2.5], [float]), ({"a": {}}, {"a": {str: str}}),
])
def test_values_of_the_shape_pass(value, shape):
    assert problem(value, shape, "v") is None


def test_the_path_names_the_field_the_item_and_the_key():
    shape = {"groups": [{"name": str, "sizes": {str: [int]}}]}
    value = {"groups": [{"name": "a", "sizes": {"x": [1]}},
                        {"name": "b", "sizes": {"x": [1], "y": [2, "3"]}}]}
    assert problem(value, shape, "manifest") == \
        "manifest.groups[1].sizes['y'][1] must be an integer, got '3'"


def test_an_object_must_have_exactly_its_fields_missing_named_first():
    shape = {"a": int, "b": int}
    assert problem({"b": 1, "c": 2}, shape, "m") == "m lacks the field 'a'"
    assert problem({"a": 1, "b": 2, "c": 3}, shape, "m") == "m has an unknown field 'c'"
    assert problem({"a": "x", "b": "y"}, shape, "m") == "m.a must be an integer, got 'x'"


def test_a_list_of_strings_reports_the_first_item_that_is_not_one():
    vocabulary = [f"w{i}" for i in range(1000)]
    assert problem(vocabulary, [str], "vocabulary") is None
    assert problem([*vocabulary, 5, None], [str], "vocabulary") == \
        "vocabulary[1000] must be a string, got 5"


def test_a_long_value_is_cut_in_the_message():
    message = problem("x" * 500, int, "v")
    assert message == f"v must be an integer, got {repr('x' * 500)[:60]}"


def test_nothing_is_converted_or_changed():
    value = {"k1": "1.5", "items": [1, 2]}
    before = repr(value)
    assert problem(value, {"k1": float, "items": [int]}, "m") == "m.k1 must be a number, got '1.5'"
    assert repr(value) == before
