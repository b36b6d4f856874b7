"""The pipeline language: steps joined into one callable, as LazyLLM's ``flow`` writes them.

* :class:`pipeline` — ``pipeline(f, g, h)(x) == h(g(f(x)))``;
* :class:`parallel` — ``parallel(f, g)(x) == (f(x), g(x))``, ``.sum`` adds the results up;
* :class:`bind` — a step that also gets the pipeline's input: ``bind(reranker, INPUT,
  PREVIOUS)`` calls ``reranker(question, nodes)``.

What it does not do: run branches in threads (:class:`~course_lib.fusion.MultiRetriever`
does, for retrieval paths), or fuse rankings (:mod:`course_lib.fusion`). An error inside a
step keeps its type and gains a note naming the step.

>>> pipeline(str.strip, parallel(str.upper, str.lower).sum)("  Ab ")
'ABab'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class _PipelineInput:
    """The placeholder :data:`INPUT`: "the input of the pipeline this step runs in"."""

    def __repr__(self) -> str:
        return "INPUT"


INPUT = _PipelineInput()
"""A placeholder for :func:`bind`: the input of the pipeline, filled in at each call
(LazyLLM writes it ``ppl.input``)."""


class _PreviousOutput:
    """The placeholder :data:`PREVIOUS`: "the previous step's output, here"."""

    def __repr__(self) -> str:
        return "PREVIOUS"


PREVIOUS = _PreviousOutput()
"""A placeholder for :func:`bind`: where the previous step's output goes, when not first:
in a pipeline ``bind(reranker, INPUT, PREVIOUS)`` calls ``reranker(question, nodes)``."""


class bind:  # noqa: N801 (LazyLLM's lower-case name)
    """A pipeline step that also receives other values: ``bind(stage, query=INPUT)``.

    In a :class:`pipeline`, a step is called with the previous step's output. A bound
    step is called as ``stage(previous output, *args, **kwargs)``, where every argument
    that is :data:`INPUT` becomes the pipeline's own input: the question a reranker
    needs after the retriever has turned it into nodes. Where an argument is
    :data:`PREVIOUS`, the previous output goes there instead of first: a reranker takes
    the query first, so its step is ``bind(reranker, INPUT, PREVIOUS)``.
    ``stage | bind(INPUT, PREVIOUS)`` is the same, written as the chapter writes its steps
    (``| bind(query=ppl.input)``, for LazyLLM's reranker, which takes the nodes first).

    The placeholder is filled by the pipeline that runs the step, so a bound step that
    uses :data:`INPUT` runs only as a step of a :class:`pipeline` (called alone it raises
    a ``TypeError`` saying so); inside a pipeline nested in another, :data:`INPUT` is the
    inner pipeline's input.

    >>> label = pipeline(str.upper, bind(lambda text, asked: f"{asked} -> {text}", asked=INPUT))
    >>> label("tea")
    'tea -> TEA'
    >>> count = pipeline(len, (lambda n, word: f"{word}: {n}") | bind(word=INPUT))
    >>> count("长城")
    '长城: 2'
    >>> ask_first = pipeline(str.upper, bind(lambda asked, text: f"{asked}: {text}",
    ...                                      INPUT, PREVIOUS))
    >>> ask_first("tea")
    'tea: TEA'
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and callable(args[0]) and args[0] is not INPUT:
            self.stage: Callable[..., Any] | None = args[0]
            args = args[1:]
        else:
            self.stage = None  # to be given by `stage | bind(...)`
        if not args and not kwargs:
            raise ValueError("bind needs something to bind: bind(stage, query=INPUT), or "
                             "stage | bind(query=INPUT)")
        self.args, self.kwargs = args, kwargs

    def __ror__(self, stage: Any) -> bind:
        """``stage | bind(...)``: the same as ``bind(stage, ...)``."""
        if self.stage is not None:
            raise TypeError(f"this bind already has its stage {_step_name(self.stage)}; "
                            f"write stage | bind(query=INPUT) without a stage inside bind()")
        if not callable(stage):
            raise TypeError(f"only a callable can be bound: got {type(stage).__name__} "
                            f"{stage!r:.60}")
        return bind(stage, *self.args, **self.kwargs)

    @property
    def uses_input(self) -> bool:
        return any(v is INPUT for v in (*self.args, *self.kwargs.values()))

    def run(self, value: Any, pipeline_input: Any) -> Any:
        """Call the stage on ``value``, with :data:`INPUT` replaced by ``pipeline_input``."""
        if self.stage is None:
            raise TypeError("bind(...) has no stage: write bind(stage, query=INPUT) or "
                            "stage | bind(query=INPUT)")

        def fill(v: Any) -> Any:
            return pipeline_input if v is INPUT else value if v is PREVIOUS else v

        args = [fill(a) for a in self.args]
        if not any(v is PREVIOUS for v in (*self.args, *self.kwargs.values())):
            args.insert(0, value)
        return self.stage(*args, **{k: fill(v) for k, v in self.kwargs.items()})

    def __call__(self, value: Any) -> Any:
        if self.uses_input:
            raise TypeError(f"{self!r} uses INPUT, the input of the pipeline it runs in: "
                            f"use it as a step of pipeline(...)")
        return self.run(value, None)

    def __repr__(self) -> str:
        bound = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"bind({', '.join([_step_name(self.stage), *bound])})"


def _step_name(step: Any) -> str:
    """A short name for a step in messages: a function's name, a bound step's repr."""
    if step is None:
        return "<no stage>"
    if isinstance(step, bind):
        return repr(step)
    return getattr(step, "__name__", None) or type(step).__name__


class pipeline:  # noqa: N801 (LazyLLM's lower-case name)
    """``pipeline(f, g, h)(x) == h(g(f(x)))``; a :class:`bind` step also gets the
    pipeline's input ``x`` where it says :data:`INPUT`.

    An error inside a step keeps its type and gains a note naming the step (its number,
    from 1, and name).

    >>> pipeline(str.strip, str.upper)("  ab ")
    'AB'
    """

    def __init__(self, *steps: Callable[..., Any]) -> None:
        if not steps:
            raise ValueError("pipeline needs at least one step")
        for number, step in enumerate(steps, start=1):
            if not callable(step):
                raise TypeError(f"pipeline step #{number} must be callable, got "
                                f"{type(step).__name__} {step!r:.60}")
            if isinstance(step, bind) and step.stage is None:
                raise TypeError(f"pipeline step #{number} is {step!r}, with no stage: write "
                                f"bind(stage, ...) or stage | bind(...)")
        self.steps = steps

    def __call__(self, value: Any) -> Any:
        pipeline_input = value
        for number, step in enumerate(self.steps, start=1):
            try:
                value = step.run(value, pipeline_input) if isinstance(step, bind) else step(value)
            except Exception as error:  # keep its type; say which step
                error.add_note(f"(raised in pipeline step #{number}, {_step_name(step)})")
                raise
        return value


class parallel:  # noqa: N801 (LazyLLM's lower-case name)
    """``parallel(f, g)(x) == (f(x), g(x))``; ``parallel(f, g).sum`` adds the results up
    (for lists: concatenates them), as LazyLLM's ``parallel(...).sum``."""

    def __init__(self, *branches: Callable[..., Any], _sum: bool = False) -> None:
        if not branches:
            raise ValueError("parallel needs at least one branch")
        self.branches, self._sum = branches, _sum

    @property
    def sum(self) -> parallel:
        return parallel(*self.branches, _sum=True)

    def __call__(self, value: Any) -> Any:
        results = tuple(branch(value) for branch in self.branches)
        if not self._sum:
            return results
        total = results[0]
        for result in results[1:]:
            total = total + result
        return total
