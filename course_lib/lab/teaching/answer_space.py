"""How many answers a release's self-check lets a learner try, and how long trying them takes.

A release's self-check (:class:`~course_lib.lab.teaching.answer_keys.HashedKey`), one slow hash
of all of an exercise's answers on its tolerance grid, hides them only as well as the number of
answer tuples a learner must hash. Counted here per answer as the smallest of these families
that holds its expected value (one exact grid point: the hash takes no neighbours):

1. the numbers the committed notebook shows: in its text, code and outputs, and the values
   its code cells list (07's 51 cut-offs are computed from the cell that lists them);
2. the values of the answer's kind (:data:`KINDS`, from the exercise's wording): one of a list
   a cell names (07's ``cut_offs``), or a share of n questions (n + 1 values), n being a count
   the notebook prints or a learner reads in the kernel;
3. the tolerance grid over the kind's range; for a string, the names the notebook shows.

It runs nothing of the notebook (a cell's assignments of literals, ``range`` and ``round``
aside): what a learner could compute is not counted. No family depends on the answer, so
naming the one that holds it narrows it no more than its size says (the guide prints them).

The **joint space** is their product (one hash covers all the answers). :func:`brute_force`
searches it as a learner who read these counts would, hashing directly, in a random order (so
its time says nothing of where the answer lies): for real if it fits a budget, else estimated.

**What an attacker can do better**, so a count is an upper bound on the work needed and a
large one proves no safety: use relations (01's recall@10 is at least the recall@5 printed and
its MRR@10 within (recall@10 − recall@5) / 6 of the MRR@5 printed: tens of tuples, not a
million; an interval's low end is under its difference); do part of the exercise and search
the rest; read other notebooks and the README; try likely values first; use more cores (the
time divides by their number) or a GPU (PBKDF2 there runs about a thousand times one core).

>>> notebook = {"cells": [
...     {"cell_type": "markdown", "source": "## Exercise\\nStore the share of the 20 questions."},
...     {"cell_type": "code", "source": "share = None", "outputs": []},
...     {"cell_type": "code", "source": 'check("99", share=share)', "outputs": []}]}
>>> space = answer_space("99", {"share": 0.35}, notebook, {"share": share(20, "questions")})
>>> [(a.name, a.family, len(a.candidates)) for a in space.answers], space.joint
([('share', 'a share of 20 questions', 21)], 21)
"""

from __future__ import annotations

import ast
import json
import math
import os
import random
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._support.places import COURSE_ROOT
from .answer_keys import ITERATIONS, HashedKey, _digest, grid

# A release for grading keeps its self-check only if one core takes longer to try its joint
# space: under it, a learner's 8-core laptop left on the week an assignment is open finds it.
THRESHOLD_S = 56 * 86_400


@dataclass(frozen=True)
class Kind:
    """An answer as the exercise's wording says: from ``low`` to ``high``, one of ``steps + 1``
    evenly spaced values (``None``: any on the grid) or of the list a code cell assigns to
    ``listed``; ``about`` says which."""

    low: float
    high: float
    steps: int | None
    about: str
    listed: str | None = None


def share(n: int, of: str) -> Kind:
    return Kind(0, 1, n, f"a share of {n:,} {of}")


def difference(n: int, of: str) -> Kind:
    return Kind(-1, 1, 2 * n, f"a difference of two shares of {n:,} {of}")


def mean(low: float, high: float, what: str) -> Kind:  # no steps: only the grid
    return Kind(low, high, None, what)


TRIAL, DEV, GAIN = (share(1000, "trial questions"), share(898, "held-out dev questions"),
                    difference(898, "held-out dev questions"))
FIFTH, MEAN = (share(180, "questions (every fifth of the 898 of dev)"),
               mean(0, 1, "a mean of shares"))
KINDS: dict[str, dict[str, Kind]] = {
    "01": {"recall_10": TRIAL, "mrr_10": mean(0, 1, "a mean reciprocal rank")},
    "02": {"plain_share": share(50, "pairs"), "sub_share": share(50, "pairs")},
    "03": {"tiny_span_recall_5": TRIAL, "tiny_context_relevance_1": MEAN},
    "04": {"in_context_recall_1": TRIAL, "in_context_recall_5": TRIAL},
    "05": {"lead_recall_1": TRIAL, "lead_recall_5": TRIAL},
    "06": {"same_first_share": TRIAL,
           "mean_first_score": mean(0, 1000, "a mean BM25 score (taken under 1,000)"),
           "largest_score_gap": mean(0, 1000, "a score difference (taken under 1,000)")},
    "07": {"best_cut_off": Kind(0.85, 0.9, None, "one of the exercise's cut_offs", "cut_offs"),
           "dev_recall": DEV, "dev_relevance": MEAN},
    "08": {"lexical_first": Kind(0, 1000, 1000, "a count of the 1,000 trial questions"),
           "dev_gain": GAIN, "dev_low": GAIN},
    "09": {"chosen_coverage": Kind(0.4, 0.8, None, "one of the exercise's GRID", "GRID"),
           "dev_kept": FIFTH, "dev_refused": FIFTH},
    "10": {"char_summary_recall_1": TRIAL, "dev_gain": GAIN, "dev_low": GAIN},
    "11": {"hnsw_recall_at_10": share(10_000, "neighbours (10 for each of 1,000 questions)"),
           "smallest_ef_for_0_98": Kind(10, 128, None, "one of the exercise's EF_GRID",
                                        "EF_GRID")},
    "12": {"chosen_max_wrong": Kind(0.01, 0.2, None, "one of the exercise's MAX_WRONGS",
                                    "MAX_WRONGS"),
           "dev_cost": Kind(0, 3, 3 * 1142, "a mean of costs 0, 1 or 3 over the 1,142 "
                                             "questions of dev_hard (len(dev_hard.answerable))")},
    "13": {"low": mean(-1, 1, "an interval's end"), "high": mean(-1, 1, "an interval's end")},
}

_NUMBER = re.compile(r"(?<![\w.])([-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
                     r"(\s?%)?")
_NAME = re.compile(r"[A-Za-z_][\w.\-]*", re.ASCII)
_SAFE = (ast.Expression, ast.Constant, ast.Tuple, ast.List, ast.ListComp, ast.comprehension,
         ast.Name, ast.Load, ast.Store, ast.Call, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub,
         ast.Mult, ast.Div, ast.USub, ast.UAdd)


def numbers(text: str) -> set[float]:
    """The numbers written in ``text`` ("1,000", "−0.012"; "82.5 %" also as 0.825)."""
    found = set()
    for written, percent in _NUMBER.findall(text):
        value = float(written.replace(",", "").replace("−", "-"))
        found |= {value, value / 100} if percent else {value}
    return found


def listed(source: str) -> dict[str, Any]:
    """The values of a code cell's assignments to a name built of literals, ``range`` and
    ``round`` alone (what a cell lists; nothing else is run).

    >>> listed("cut_offs = [round(0.85 + 0.001 * i, 3) for i in range(3)]\\nx = f(1)")
    {'cut_offs': [0.85, 0.851, 0.852]}
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:  # text, or a cell magic
        return {}
    values = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        parts = list(ast.walk(expression := ast.Expression(node.value)))
        if all(isinstance(p, _SAFE) for p in parts) and not any(
                isinstance(p, ast.Constant) and isinstance(p.value, (int, float))
                and abs(p.value) > 100_000 for p in parts):
            try:
                values[node.targets[0].id] = eval(  # noqa: S307
                    compile(expression, "<cell>", "eval"),
                    {"__builtins__": {}, "range": range, "round": round})
            except Exception:  # a name defined elsewhere
                pass
    return values


def _flat(value: Any) -> list[Any]:
    return [x for v in value for x in _flat(v)] if isinstance(value, (list, tuple)) else [value]


def shown(notebook: dict[str, Any]) -> tuple[set[Any], dict[str, Any]]:
    """(the numbers and names the notebook shows in its text, code and outputs, with the
    values its code cells list; those lists by name)."""
    from .exercises import _output_texts

    sources = ["".join(cell["source"]) for cell in notebook["cells"]]
    lists = {name: value for source in sources for name, value in listed(source).items()}
    text = "\n".join(sources + _output_texts(notebook))
    return numbers(text) | set(_NAME.findall(text)) | set(_flat(list(lists.values()))), lists


@dataclass
class Answer:
    """One answer's family: what it is and its candidates (grid points, or names)."""

    name: str
    family: str
    candidates: Sequence[Any]


@dataclass
class Space:
    exercise: str
    answers: list[Answer]

    @property
    def joint(self) -> int:
        return math.prod(len(answer.candidates) for answer in self.answers)


def answer_space(exercise: str, expected: dict[str, Any],
                 notebook: dict[str, Any] | Path | None = None,
                 kinds: dict[str, Kind] | None = None, tolerance: float = 1e-3) -> Space:
    """Each answer's smallest family that holds its ``expected`` value, from the committed
    notebook (the module docstring); a ``ValueError`` if none does (a wrong :class:`Kind`)."""
    if notebook is None:
        notebook = next((COURSE_ROOT / "notebooks").glob(f"{exercise}_*.ipynb"))
    if isinstance(notebook, Path):
        notebook = json.loads(notebook.read_text(encoding="utf-8"))
    kinds = KINDS[exercise] if kinds is None else kinds
    everything, lists = shown(notebook)

    def points(xs: Iterable[Any]) -> list[int]:
        return sorted({grid(x, tolerance)[1] for x in xs
                       if isinstance(x, (int, float)) and not isinstance(x, bool)})

    answers = []
    for name, value in expected.items():
        value = value.item() if hasattr(value, "item") else value  # numpy's scalars
        if isinstance(value, str):
            families: dict[str, Sequence[Any]] = {"a name the notebook shows": sorted(
                x for x in everything if isinstance(x, str))}
            target: Any = value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            kind, target = kinds[name], grid(value, tolerance)[1]
            families = {"a number the notebook shows": points(everything)}
            if kind.listed:
                families[kind.about] = points(_flat(lists.get(kind.listed, [])))
            elif kind.steps:
                families[kind.about] = points((kind.low * kind.steps + k * (kind.high - kind.low))
                                              / kind.steps for k in range(kind.steps + 1))
            families[f"{kind.about}: the grid over [{kind.low:g}, {kind.high:g}]"] = range(
                grid(kind.low, tolerance)[1], grid(kind.high, tolerance)[1] + 1)
        else:
            raise ValueError(f"{exercise}: {name} is neither a number nor a string: not counted")
        holding = [(len(c), i, f) for i, (f, c) in enumerate(families.items()) if target in c]
        if not holding:
            raise ValueError(f"{exercise}: no family holds {name}: is its kind right?")
        family = min(holding)[2]
        answers.append(Answer(name, family, families[family]))
    return Space(exercise, answers)


def _candidate(space: Space, index: int) -> list[list[Any]]:
    """The ``index``-th answer tuple of the joint space, gridded as the hash takes it."""
    gridded = []
    for answer in space.answers:
        index, i = divmod(index, len(answer.candidates))
        value = answer.candidates[i]
        gridded.append(["s" if isinstance(value, str) else "n", value])
    return gridded


def hash_rate(seconds: float = 2.0, iterations: int = ITERATIONS) -> float:
    """Answer tuples a key's hash takes per second, on one core."""
    tries, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds or tries < 3:
        _digest("rate", [["n", tries]], bytes(16), iterations)
        tries += 1
    return tries / elapsed


def brute_force(space: Space, key: HashedKey, budget_s: float = 600.0) -> dict[str, Any]:
    """Search ``space`` for ``key``'s answers on one core, in a random order: for real if the
    whole space takes at most ``budget_s`` at the rate measured first, else estimated.
    Returns ``tries_per_s``, ``measured``, ``seconds`` (until found; estimated: the average,
    half the space) and ``whole_s`` (the whole space)."""
    rate = hash_rate(iterations=key.iterations)
    if space.joint / rate > budget_s:
        return {"tries_per_s": rate, "measured": False, "seconds": (space.joint + 1) / 2 / rate,
                "whole_s": space.joint / rate}
    salt, start = bytes.fromhex(key.salt), time.perf_counter()
    order = random.Random(os.urandom(16)).sample(range(space.joint), space.joint)
    for tries, index in enumerate(order, 1):
        if _digest(key.exercise, _candidate(space, index), salt,
                   key.iterations) == key.answer_digest:
            seconds = time.perf_counter() - start
            return {"tries_per_s": tries / seconds, "measured": True, "seconds": seconds,
                    "whole_s": space.joint * seconds / tries}
    raise AssertionError(f"{space.exercise}: the answers are not in the space counted")


def duration(seconds: float) -> str:
    """``seconds`` in words: ``duration(5400)`` is ``'1.5 hours'``."""
    units = (("years", 365 * 86_400), ("days", 86_400), ("hours", 3600), ("minutes", 60))
    unit, size = next(((u, n) for u, n in units if seconds >= n), ("s", 1))
    return f"{seconds / size:.1f} {unit}"


def release_check(space: Space | str, tries_per_s: float) -> tuple[bool, str]:
    """Whether a release for grading keeps ``space``'s self-check by default, and why; given
    an exercise's id, its answer space is counted first from its worked solution's answers
    (``False`` if they cannot be: a check that might give them away is not released)."""
    if isinstance(space, str):
        from . import exercises

        try:
            space = answer_space(space, exercises.expected_answers(space),
                                 tolerance=exercises.EXERCISES[space].tolerance)
        except (ValueError, KeyError) as error:
            return False, f"its answers could not be counted ({error})"
    whole = space.joint / tries_per_s
    keep = whole >= THRESHOLD_S
    return keep, (f"{space.joint:,} answer tuples take one core {duration(whole)} to try, "
                  f"{'over' if keep else 'under'} {duration(THRESHOLD_S)}")

