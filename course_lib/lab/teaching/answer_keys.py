"""Answer keys: what an exercise's check compares a learner's answers with.

Two keys keep one interface (:class:`AnswerKey`), so a check reads the same either way:

* :class:`SolutionKey` holds the worked solution's answers and the answers of its known
  wrong methods (``solutions/NN_name.py`` run in the kernel — the self-paced course);
* :class:`HashedKey` holds only salted, slow hashes of them (a file beside a classroom
  release, ``NN_name.check.json``, where ``solutions/`` must not be).

**"Within tolerance" is written once, here** (:func:`grid`): every number is put on a grid
of the exercise's tolerance, ``floor(x / tolerance + 0.5)``, and two answers agree when
their strings and shapes are equal and every number is at most one grid step from the
other's. So a value within the tolerance always agrees, and one more than twice the
tolerance away never does. A hashed key tries the ``3**k`` neighbouring grid points of the
learner's ``k`` numbers, which is why the rule is a grid and not ``abs(a - b) <= tol``.

A hashed key hashes **all of an exercise's answers together**, and a wrong method's hash
covers all the answers too (those it does not change at their right values). What that
buys and what it does not:

* no answer can be read from the file, and none can be searched for alone: a search must
  guess every answer at once, on the grid;
* a check that works offline is still an oracle: a learner who loops over candidate answers
  can find a small answer space (a share out of 20 questions has 21 values). So a class's
  grade never rests on this key — the grading key, which only the grader reads, holds the
  real values (:mod:`course_lib.lab.teaching.grading`);
* it cannot say *which* answer is wrong, only that they do not all match.

Where even that oracle is too much, a release carries :func:`no_self_check` instead: a key
file with no answers, and the check only says that the answers are graded after submission.
A classroom's releases do so by default wherever a brute force would find the answers
(:mod:`course_lib.lab.teaching.answer_space` counts and times it), and for an exam everywhere.

>>> key = SolutionKey("99", {"share": 0.25, "count": 3},
...                   {"You counted pairs, not questions.": {"count": 6}}, tolerance=1e-3)
>>> key.is_right({"share": 0.2504, "count": 3}), key.is_right({"share": 0.26, "count": 3})
(True, False)
>>> hashed = key.hashed(salt=bytes(16), iterations=1000)
>>> hashed.is_right({"share": 0.2504, "count": 3})
True
>>> hashed.mistake_hints({"share": 0.25, "count": 6})
['You counted pairs, not questions.']
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..._support.validation import is_number

KEY_SUFFIX = ".check.json"
# PBKDF2-SHA256 rounds: about 3 ms a hash here; a failed check tries at most a few hundred.
ITERATIONS = 10_000


def grid(value: Any, tolerance: float) -> Any:
    """``value`` with every number put on the tolerance grid (shapes and strings kept).

    >>> grid((0.2504, "a.txt", 3), 1e-3)
    ['t', [['n', 250], ['s', 'a.txt'], ['n', 3000]]]
    """
    if not tolerance > 0:
        raise ValueError(f"tolerance must be a positive number, got {tolerance!r}")
    if isinstance(value, bool) or value is None:
        return ["v", repr(value)]
    if is_number(value, allow_nan=True):
        number = float(value)
        if not math.isfinite(number):
            return ["v", repr(number)]
        return ["n", math.floor(number / tolerance + 0.5)]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, (tuple, list)):
        return ["t", [grid(item, tolerance) for item in value]]
    return ["v", repr(value)]


def _agree(a: Any, b: Any) -> bool:
    """Two gridded values agree: same shape, equal strings, numbers at most one step apart."""
    if a[0] != b[0]:
        return False
    if a[0] == "n":
        return abs(a[1] - b[1]) <= 1
    if a[0] == "t":
        return len(a[1]) == len(b[1]) and all(_agree(x, y) for x, y in zip(a[1], b[1], strict=True))
    return a[1] == b[1]


def agree(given: Any, expected: Any, tolerance: float) -> bool:
    """Whether ``given`` matches ``expected`` within ``tolerance`` (the grid rule above).

    >>> agree(0.8724, 0.872, 1e-3), agree(0.874, 0.872, 1e-3), agree("x", "x", 1e-3)
    (True, False, True)
    """
    return _agree(grid(given, tolerance), grid(expected, tolerance))


def _neighbours(gridded: Any) -> list[Any]:
    """Every gridded value whose numbers are each at most one step from ``gridded``'s."""
    if gridded[0] == "n":
        return [["n", gridded[1] + step] for step in (0, -1, 1)]
    if gridded[0] == "t":
        return [["t", list(items)]
                for items in itertools.product(*(_neighbours(item) for item in gridded[1]))]
    return [gridded]


def _digest(exercise: str, gridded_answers: list[Any], salt: bytes, iterations: int) -> str:
    payload = json.dumps([exercise, gridded_answers], ensure_ascii=False, separators=(",", ":"))
    return hashlib.pbkdf2_hmac("sha256", payload.encode(), salt, iterations).hex()


def _plain(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and tuples as lists (JSON's types)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    return value.item() if hasattr(value, "item") else value


def no_self_check(exercise: str, names: tuple[str, ...]) -> str:
    """A key file that checks nothing (see the module docstring)."""
    return json.dumps({"exercise": exercise, "names": list(names), "answers": None},
                      indent=1) + "\n"


class AnswerKey(Protocol):
    """What a check needs to know; it never needs the answers themselves."""

    exercise: str
    names: tuple[str, ...]

    def is_right(self, answers: dict[str, Any]) -> bool:
        """All answers match the worked solution's."""

    def mistake_hints(self, answers: dict[str, Any]) -> list[str]:
        """The hints of the known wrong methods whose answers these are."""

    def wrong_names(self, answers: dict[str, Any]) -> list[str] | None:
        """The names of the answers that do not match, or ``None`` if the key cannot tell."""


@dataclass
class SolutionKey:
    """The worked solution's ``expected`` answers and its ``mistakes`` (``{hint: answers}``,
    or a function returning them, called once when first needed: wrong methods can take a
    while to run). An answer a mistake leaves out is taken at its right value."""

    exercise: str
    expected: dict[str, Any]
    known: dict[str, dict[str, Any]] | Callable[[], dict[str, dict[str, Any]]] = \
        field(default_factory=dict)
    tolerance: float = 1e-3

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.expected)

    @property
    def mistakes(self) -> dict[str, dict[str, Any]]:
        if callable(self.known):
            self.known = self.known()
        return self.known

    def mistaken(self, hint: str) -> dict[str, Any]:
        """All the answers the wrong method behind ``hint`` gives."""
        return {**self.expected, **self.mistakes[hint]}

    def _agrees(self, answers: dict[str, Any], target: dict[str, Any]) -> bool:
        return all(agree(answers[name], target[name], self.tolerance) for name in self.names)

    def is_right(self, answers: dict[str, Any]) -> bool:
        return self._agrees(answers, self.expected)

    def mistake_hints(self, answers: dict[str, Any]) -> list[str]:
        return [hint for hint in self.mistakes if self._agrees(answers, self.mistaken(hint))]

    def wrong_names(self, answers: dict[str, Any]) -> list[str] | None:
        return [name for name in self.names
                if not agree(answers[name], self.expected[name], self.tolerance)]

    def collisions(self) -> list[tuple[str | None, str]]:
        """Pairs the check cannot tell apart: ``(None, hint)`` where a wrong method gives the
        right answers, ``(hint_a, hint_b)`` where two wrong methods give the same ones."""
        hints = list(self.mistakes)
        found: list[tuple[str | None, str]] = [
            (None, hint) for hint in hints if self.is_right(self.mistaken(hint))]
        found += [(a, b) for a, b in itertools.combinations(hints, 2)
                  if self._agrees(self.mistaken(a), self.mistaken(b))]
        return found

    def to_json(self) -> str:
        """The grading key: the answers themselves, for the teacher's grader only (never
        beside a release; see :mod:`course_lib.lab.teaching.grading`). Numbers as plain floats."""
        return json.dumps({"exercise": self.exercise, "tolerance": self.tolerance,
                           "expected": _plain(self.expected),
                           "mistakes": _plain(self.mistakes)},
                          ensure_ascii=False, indent=1) + "\n"

    @classmethod
    def read(cls, path: Path) -> SolutionKey:
        """Read a grading key written by :meth:`to_json`; a missing or malformed file is an
        error naming it."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(str(data["exercise"]), dict(data["expected"]),
                       {str(hint): dict(answers) for hint, answers in data["mistakes"].items()},
                       float(data["tolerance"]))
        except FileNotFoundError:
            raise FileNotFoundError(f"no grading key {path}: `make classroom` writes one per "
                                    f"assignment") from None
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"{path}: not a grading key written by `python -m course_lib "
                             f"classroom` ({error})") from error

    def hashed(self, salt: bytes | None = None, iterations: int = ITERATIONS) -> HashedKey:
        """The same key with the answers replaced by salted hashes (a new random salt)."""
        salt = os.urandom(16) if salt is None else salt

        def digest(answers: dict[str, Any]) -> str:
            gridded = [grid(answers[name], self.tolerance) for name in self.names]
            return _digest(self.exercise, gridded, salt, iterations)

        return HashedKey(self.exercise, self.names, self.tolerance, salt.hex(), iterations,
                         digest(self.expected),
                         [(hint, digest(self.mistaken(hint))) for hint in self.mistakes])


@dataclass
class HashedKey:
    """Salted PBKDF2 hashes of the answers (see the module docstring for what they protect)."""

    exercise: str
    names: tuple[str, ...]
    tolerance: float
    salt: str
    iterations: int
    answer_digest: str
    mistake_digests: list[tuple[str, str]]

    def _digests(self, answers: dict[str, Any]) -> set[str]:
        """The hashes of every grid point next to ``answers`` (at most 3**k for k numbers)."""
        gridded = ["t", [grid(answers[name], self.tolerance) for name in self.names]]
        return {_digest(self.exercise, near[1], bytes.fromhex(self.salt), self.iterations)
                for near in _neighbours(gridded)}

    def is_right(self, answers: dict[str, Any]) -> bool:
        return self.answer_digest in self._digests(answers)

    def mistake_hints(self, answers: dict[str, Any]) -> list[str]:
        near = self._digests(answers)
        return [hint for hint, digest in self.mistake_digests if digest in near]

    def wrong_names(self, answers: dict[str, Any]) -> list[str] | None:
        return None  # one hash of all the answers: it cannot tell which is wrong

    def to_json(self) -> str:
        return json.dumps({"exercise": self.exercise, "names": list(self.names),
                           "tolerance": self.tolerance, "kdf": "pbkdf2-sha256",
                           "salt": self.salt, "iterations": self.iterations,
                           "answers": self.answer_digest,
                           "mistakes": [{"hint": hint, "answers": digest}
                                        for hint, digest in self.mistake_digests]},
                          ensure_ascii=False, indent=1) + "\n"

    @classmethod
    def read(cls, path: Path) -> HashedKey | None:
        """Read a key file; ``None`` for a release without a self-check (its file holds no
        answers); a malformed file is a ``ValueError`` naming it."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("answers", "") is None:
                return None
            if data.get("kdf") != "pbkdf2-sha256":
                raise ValueError(f"unknown kdf {data.get('kdf')!r}")
            return cls(str(data["exercise"]), tuple(data["names"]), float(data["tolerance"]),
                       str(data["salt"]), int(data["iterations"]), str(data["answers"]),
                       [(str(m["hint"]), str(m["answers"])) for m in data["mistakes"]])
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}: not an answer key written by `python -m course_lib "
                             f"classroom` ({error})") from error
