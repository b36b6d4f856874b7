"""The command line's argument checks and its one way to write a result: each check names
the option and what is allowed (:class:`_BadArgument` becomes one ``error:`` line and exit
status 2, in :mod:`course_lib.lab.cli`), and every output file is written atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from .._support.validation import close_names
from ..store.safe_folder import write_text_atomically
from .data.datasets import DatasetFormatError, SquadSet, load_squad

PROG = "python -m course_lib"


class _BadArgument(Exception):
    """An argument that cannot work (internal: becomes one error line and status 2)."""


# ---------------------------------------------------------------- argument checks
def _positive_int(text: str) -> int:
    """argparse ``type`` for ``--docs-per-file``: a whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number ≥ 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number ≥ 1, got {value}")
    return value


def _check_target(value: str | None, option: str = "--json", example: str = "result.json"
                  ) -> Path | None:
    """The ``option`` output path, once it is sure that a file can be written there.

    Refuses an empty name, a folder, something that is not a regular file (``/dev/null``,
    a FIFO), and a folder that is missing or cannot be written to — the last is tried
    by creating and removing an empty temporary file there. Writes nothing else.
    ``example`` is the file name its hints suggest.
    """
    if value is None:
        return None
    if not value.strip():
        raise _BadArgument(f"argument {option}: give a file name, e.g. {option} {example}")
    target = Path(value)
    if target.is_dir():
        raise _BadArgument(f"argument {option}: {target} is a folder; give a file name, "
                           f"e.g. {option} {target / example}")
    if target.exists() and not target.is_file():
        raise _BadArgument(f"argument {option}: {target} exists and is not a regular file; "
                           "give the name of a new or an ordinary file")
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise _BadArgument(f"argument {option}: the folder {folder} {what}; create it "
                           "first or write somewhere else")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise _BadArgument(f"argument {option}: cannot write into the folder {folder} "
                           f"({error.strerror}); choose a folder you can write to") from None
    os.close(fd)
    os.unlink(probe)
    return target


def _check_json_target(value: str | None) -> Path | None:
    """The ``--json`` path, once it is sure that a file can be written there
    (:func:`_check_target`)."""
    return _check_target(value, "--json", "result.json")


def _check_distinct(targets: dict[str, Path | None]) -> None:
    """Refuse two output options (``{"--json": path, ...}``) that name the same file."""
    seen: dict[Path, str] = {}
    for option, target in targets.items():
        if target is None:
            continue
        key = target.resolve()
        if key in seen:
            raise _BadArgument(f"argument {option}: {target} is also the {seen[key]} file; "
                               "give each output its own file")
        seen[key] = option


def _check_squad(value: str | Path) -> SquadSet:
    """The ``--squad`` file, read and checked: it exists, is SQuAD-format, has questions."""
    try:
        squad = load_squad(value)
    except OSError as error:
        raise _BadArgument(f"argument --squad: {error.filename}: {error.strerror}") from None
    except DatasetFormatError as error:
        raise _BadArgument(f"argument --squad: {error}") from None
    if not squad.questions:
        raise _BadArgument(f"argument --squad: {value} has no (non-empty) questions to "
                              "evaluate; give a SQuAD file with questions")
    return squad


def _check_pipeline(name: str, option: str = "--pipeline") -> str:
    """``name`` when it is a registered pipeline; else a hint with the closest names
    (the error names the argument ``option``)."""
    from .systems.pipelines import PIPELINES
    if name in PIPELINES:
        return name
    close = close_names(name, PIPELINES, n=3)
    known = (f"did you mean {' or '.join(close)}? (`{PROG} pipelines` lists them all)" if close
             else f"choose one of {', '.join(sorted(PIPELINES))}")
    raise _BadArgument(f"argument {option}: unknown pipeline {name!r}; {known}")


def _check_pipelines(names: list[str], baseline: str | None) -> tuple[list[str], str]:
    """``compare``'s pipelines (at least two, each known, none twice) and its baseline
    (one of them; default the first)."""
    for name in names:
        _check_pipeline(name, "PIPELINE")
    twice = next((name for index, name in enumerate(names) if name in names[:index]), None)
    if twice is not None:
        raise _BadArgument(f"argument PIPELINE: {twice!r} is named twice; name each "
                           "pipeline once")
    if len(names) < 2:
        raise _BadArgument(f"argument PIPELINE: compare needs at least two pipelines, got "
                           f"only {names[0]!r}; name another (`{PROG} pipelines` lists them)")
    if baseline is None:
        return names, names[0]
    _check_pipeline(baseline, "--baseline")
    if baseline not in names:
        raise _BadArgument(f"argument --baseline: {baseline!r} is not among the pipelines "
                           f"compared ({', '.join(names)}); name it among them too")
    return names, baseline


# ---------------------------------------------------------------- writing results
def _write_json(data: object, target: Path | None) -> None:
    """Write ``data`` as JSON to ``target`` atomically (nothing when ``target`` is None).

    The text goes to a temporary file beside ``target`` that then replaces it in one
    step, so ``target`` is either the old file or the whole new one; the temporary file
    is removed on any failure (disk full, interrupted, ...).
    """
    if target is None:
        return
    write_text_atomically(target, json.dumps(data, ensure_ascii=False, indent=2))
