"""Command line: ``python -m course_lib {data,pipelines,evaluate,reproduce}``.

The sub-command names and the JSON keys they write are an interface other tools
read: keep them stable.

Every argument is checked before any work starts: the ``--squad`` file exists and is
a well-formed SQuAD file with questions, ``--pipeline`` is a known name,
``--docs-per-file`` is at least 1, and the ``--json`` target is a file name (not a
folder) in a folder that exists and can be written to. A bad argument, or a failure
during the work, prints one ``python -m course_lib ...: error: ...`` line (argparse's
style; argparse's own errors add its usage line) and exits with status 2. The
``--json`` file is written atomically: it appears whole, or not at all, and no
temporary file is left behind.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .datasets import (
    DatasetFormatError,
    DatasetUnavailableError,
    SquadSet,
    build_knowledge_base,
    fetch_cmrc2018,
    load_squad,
)

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


def _check_json_target(value: str | None) -> Path | None:
    """The ``--json`` path, once it is sure that a file can be written there.

    Refuses an empty name, a folder, something that is not a regular file (``/dev/null``,
    a FIFO), and a folder that is missing or cannot be written to — the last is tried
    by creating and removing an empty temporary file there. Writes nothing else.
    """
    if value is None:
        return None
    if not value.strip():
        raise _BadArgument("argument --json: give a file name, e.g. --json result.json")
    target = Path(value)
    if target.is_dir():
        raise _BadArgument(f"argument --json: {target} is a folder; give a file name, "
                              f"e.g. --json {target / 'result.json'}")
    if target.exists() and not target.is_file():
        raise _BadArgument(f"argument --json: {target} exists and is not a regular file; "
                              "give the name of a new or an ordinary file")
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise _BadArgument(f"argument --json: the folder {folder} {what}; create it "
                              "first or write somewhere else")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise _BadArgument(f"argument --json: cannot write into the folder {folder} "
                              f"({error.strerror}); choose a folder you can write to") from None
    os.close(fd)
    os.unlink(probe)
    return target


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


def _check_pipeline(name: str) -> str:
    """``name`` when it is a registered pipeline; else a hint with the closest names."""
    from .pipelines import PIPELINES
    if name in PIPELINES:
        return name
    close = difflib.get_close_matches(name, PIPELINES, n=3)
    known = (f"did you mean {' or '.join(close)}? (`{PROG} pipelines` lists them all)" if close
             else f"choose one of {', '.join(sorted(PIPELINES))}")
    raise _BadArgument(f"argument --pipeline: unknown pipeline {name!r}; {known}")


# ---------------------------------------------------------------- writing results
def _write_json(data: object, target: Path | None) -> None:
    """Write ``data`` as JSON to ``target`` atomically (nothing when ``target`` is None).

    The text goes to a temporary file beside ``target`` that then replaces it in one
    step, so ``target`` is either the old file or the whole new one; the temporary file
    is removed on any failure (disk full, interrupted, ...).
    """
    if target is None:
        return
    text = json.dumps(data, ensure_ascii=False, indent=2)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp_name, target)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


# ---------------------------------------------------------------- sub-commands
# Each ``_check_*`` reads and checks its arguments (cheap; no work), and returns what its
# ``_run_*`` needs; a problem is a _BadArgument. Nothing runs before every check passed.
Checked = dict[str, Any]


def _check_none(args: argparse.Namespace) -> Checked:
    return {}


def _run_data(args: argparse.Namespace, checked: Checked) -> None:
    path = fetch_cmrc2018()
    squad = load_squad(path)
    print(f"CMRC 2018 trial: {path}")
    print(f"  {len(squad.paragraphs)} paragraphs, {len(squad.questions)} questions "
          f"({len(squad.skipped)} empty skipped, {len(squad.fixed_offsets)} answer offsets fixed)")
    if args.embed:
        from .pipelines import embed_knowledge_base

        print("embedding the knowledge base (once; minutes with e5, then cached) ...", flush=True)
        counts = embed_knowledge_base(build_knowledge_base(squad, 10))
        print("  cached: " + ", ".join(f"{n} passages and questions with {m}"
                                       for m, n in counts.items()) + " (e5: and their sentences)")


def _run_pipelines(args: argparse.Namespace, checked: Checked) -> None:
    from .pipelines import PIPELINES
    width = max(len(name) for name in PIPELINES)
    for name, pipeline in PIPELINES.items():
        print(f"{name:<{width}}  {pipeline.description}")


def _check_evaluate(args: argparse.Namespace) -> Checked:
    pipeline = _check_pipeline(args.pipeline)
    target = _check_json_target(args.json)
    return {"pipeline": pipeline, "json": target, "squad": _check_squad(args.squad)}


def _run_evaluate(args: argparse.Namespace, checked: Checked) -> None:
    from .evaluation import evaluate, format_result
    kb = build_knowledge_base(checked["squad"], args.docs_per_file)
    result = evaluate(kb, checked["pipeline"])
    print(format_result(result))
    _write_json(result, checked["json"])


def _check_reproduce(args: argparse.Namespace) -> Checked:
    target = _check_json_target(args.json)
    return {"json": target, "squad": _check_squad(args.squad) if args.squad else None}


def _run_reproduce(args: argparse.Namespace, checked: Checked) -> None:
    from .reproduce import format_report, reproduce
    squad = checked["squad"] or load_squad(fetch_cmrc2018())
    report = reproduce(build_knowledge_base(squad, 10))
    print(format_report(report))
    _write_json(report, checked["json"])


Check = Callable[[argparse.Namespace], Checked]
Run = Callable[[argparse.Namespace, Checked], None]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; each sub-command's defaults hold its parser, check and run."""
    parser = argparse.ArgumentParser(prog=PROG, description="Upgrading RAG recall: course tools")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, summary: str, check: Check, run: Run) -> argparse.ArgumentParser:
        sub_parser = sub.add_parser(name, help=summary)
        sub_parser.set_defaults(parser=sub_parser, check=check, run=run)
        return sub_parser

    data = command("data", "fetch and verify CMRC 2018 trial", _check_none, _run_data)
    data.add_argument("--embed", action="store_true",
                      help="also embed its knowledge base with e5 and USE (minutes, once: "
                           "notebooks then start warm)")
    command("pipelines", "list pipeline names", _check_none, _run_pipelines)
    evaluate = command("evaluate", "score a pipeline on a SQuAD-format file",
                       _check_evaluate, _run_evaluate)
    evaluate.add_argument("--squad", required=True, help="SQuAD-format JSON file")
    evaluate.add_argument("--pipeline", required=True, help="see `pipelines`")
    evaluate.add_argument("--docs-per-file", type=_positive_int, default=10,
                          help="paragraphs per knowledge-base file (≥ 1, default 10)")
    evaluate.add_argument("--json", help="also write the result here (its folder must exist)")
    reproduce = command("reproduce", "the chapter's tables beside ours",
                        _check_reproduce, _run_reproduce)
    reproduce.add_argument("--squad", help="default: CMRC 2018 trial")
    reproduce.add_argument("--json", help="also write the report here (its folder must exist)")
    return parser


def _fail(parser: argparse.ArgumentParser, message: str) -> int:
    """Print ``message`` as one ``PROG command: error: ...`` line; the exit status 2."""
    print(f"{parser.prog}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); the exit status.

    0 on success; 2 for a bad argument or a failed run, after one ``error:`` line on
    stderr. It returns rather than raising ``SystemExit`` (argparse's own exits, such as
    ``--help`` or a missing argument, become the return value), so it can be called
    from Python; ``python -m course_lib`` passes the status to ``sys.exit``.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    try:
        checked = args.check(args)
    except _BadArgument as problem:
        return _fail(args.parser, str(problem))
    try:
        args.run(args, checked)
    except (DatasetUnavailableError, ValueError, OSError) as error:
        return _fail(args.parser, str(error))
    return 0
