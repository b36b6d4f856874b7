"""Check that parsed JSON has the shape you expect, with a message that names the field.

A *shape* is written with Python's own types:

* ``str``, ``int``, ``float`` — a JSON string, integer, number. An integer counts as a
  number; ``true``/``false`` count as neither, and a number must be finite;
* ``object`` — any value; ``None`` — JSON ``null``; a tuple — any one of its shapes;
* ``[shape]`` — a list whose every item has ``shape``;
* ``{str: shape}`` — an object with any keys, every value of ``shape``;
* ``{"name": shape, ...}`` — an object with exactly these fields.

:func:`problem` returns the first difference as a sentence, or ``None``. It does not
convert or repair anything, and it checks types, not values (a string may be empty).

>>> shape = {"k1": float, "model": (str, None), "groups": [str]}
>>> problem({"k1": 1.5, "model": None, "groups": ["root"]}, shape, "manifest") is None
True
>>> problem({"k1": "1.5", "model": None, "groups": []}, shape, "manifest")
"manifest.k1 must be a number, got '1.5'"
>>> problem({"k1": 1, "model": 3, "groups": []}, shape, "manifest")
'manifest.model must be a string or null, got an integer'
>>> problem({"k1": 1, "groups": []}, shape, "manifest")
"manifest lacks the field 'model'"

Why not ``jsonschema`` (tried): to give messages like these it needs a translation
layer (field path from its schema path, a sentence per kind of error) about half as long
as this module, plus a redefined type checker for "finite number" and "integer, not
2.0"; and importing it took 1.4 s on the course machine (its format checkers).
"""

from __future__ import annotations

import math
from typing import Any

from .._support.validation import is_int

_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
          list: "a list", dict: "an object", type(None): "null"}


def type_name(shape: Any) -> str:
    """How a message names a shape or a Python type: ``'a list'``, ``'a string or null'``."""
    if isinstance(shape, tuple):
        return " or ".join(type_name(option) for option in shape)
    if shape is None:
        return "null"
    if isinstance(shape, list):
        return "a list"
    if isinstance(shape, dict):
        return "an object"
    return _NAMES.get(shape, shape.__name__)


def problem(value: Any, shape: Any, where: str) -> str | None:
    """The first way ``value`` differs from ``shape`` (see above), or ``None``.

    ``where`` names ``value`` in the message; a field adds ``.name``, an item ``[i]``,
    a key ``['key']``.
    """
    if isinstance(shape, tuple):
        if any(problem(value, option, where) is None for option in shape):
            return None
        return f"{where} must be {type_name(shape)}, got {type_name(type(value))}"
    if shape is None or shape in (int, float, str, object):
        fits = {None: value is None, object: True, str: isinstance(value, str),
                int: is_int(value),
                float: is_int(value) or (isinstance(value, float) and math.isfinite(value))}[shape]
        return None if fits else f"{where} must be {type_name(shape)}, got {value!r:.60}"
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where} must be a list, got {type_name(type(value))}"
        if shape[0] is str and all(isinstance(item, str) for item in value):
            return None  # the common long list (a vocabulary): one fast pass
        problems = (problem(item, shape[0], f"{where}[{i}]") for i, item in enumerate(value))
        return next((p for p in problems if p), None)
    if not isinstance(value, dict):
        return f"{where} must be an object, got {type_name(type(value))}"
    if list(shape) == [str]:  # any keys (JSON keys are always strings)
        problems = (problem(item, shape[str], f"{where}[{key!r}]") for key, item in value.items())
        return next((p for p in problems if p), None)
    missing = [field for field in shape if field not in value]
    if missing:
        return f"{where} lacks the field {missing[0]!r}"
    unknown = [field for field in value if field not in shape]
    if unknown:
        return f"{where} has an unknown field {unknown[0]!r}"
    problems = (problem(value[field], s, f"{where}.{field}") for field, s in shape.items())
    return next((p for p in problems if p), None)
