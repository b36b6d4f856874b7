"""Command line: ``python -m course_lib {data,pipelines,evaluate,compare,reproduce,classroom,
grade,answer-space}``.

* ``data [--embed]`` — fetch and verify CMRC 2018 trial and dev and DRCD test (SHA-256),
  print what each holds; ``--embed`` also fills the embedding cache (:func:`_embed_all`).
* ``pipelines`` — list the registered pipeline names.
* ``evaluate --squad FILE --pipeline NAME [--docs-per-file N] [--json OUT] [--run OUT]
  [--qrels OUT]`` — score one pipeline: each metric with its 95 % interval;
  ``--json`` writes the result (with ``intervals`` and ``per_question``), ``--run`` /
  ``--qrels`` a TREC run (tag: the pipeline name) and qrels file for ``trec_eval``,
  ``ir_measures`` or ``ranx`` (:mod:`course_lib.lab.measure.trec`).
* ``compare --squad FILE [--docs-per-file N] [--baseline NAME] [--json OUT] A B [C ...]``
  — evaluate two or more pipelines on the same questions, print each metric with its
  interval, and test each pipeline against the baseline (``--baseline``, one of those
  named; default the first): paired differences, exact McNemar / sign-flip p-values,
  Holm-adjusted over the whole table (:mod:`course_lib.lab.measure.comparison`).
* ``reproduce [--squad FILE] [--json OUT] [--table NAME ...]`` — the chapter's tables
  beside ours, each row tested against its table's first row; without ``--squad``, also the
  settings chosen on trial reported on the held-out dev set, and where each upgrade wins
  (DRCD and CMRC, choose half → report half). ``--table`` (repeatable)
  prints only the tables named, without the held-out section.
* ``classroom [--out DIR] [--exercise NN ...] [--no-release] [--exchange FOLDER]
  [--self-check {auto,on,off}] [--language {en,zh-CN}]`` — an nbgrader course folder
  for a classroom lab (default ``classroom``; every graded exercise, 01–13), then nbgrader's
  student release of each (:mod:`course_lib.lab.teaching.classroom`); ``auto`` releases a self-check
  only where brute force would not find the answers (``--no-self-check``: ``off``);
  ``zh-CN``: the Chinese notebooks, same grading (:mod:`course_lib.lab.teaching.languages`).
* ``grade --assignment NN_name [--course DIR]`` — after the deadline: collect, autograde in
  a sandbox, feedback, and ``DIR/grades.csv`` (``make grade``;
  :mod:`course_lib.lab.teaching.grading`).
* ``answer-space [--exercise NN ...] [--budget S] [--json OUT]`` — how many answer tuples each
  exercise's self-check lets a learner try, and the brute force measured (for real within
  ``--budget`` seconds, else estimated) on one core (``make answer-space``;
  :mod:`course_lib.lab.teaching.answer_space`).

The sub-command names and the JSON keys they write are an interface other tools
read: keep them stable.

Every argument is checked before any work starts: the ``--squad`` file exists and is
a well-formed SQuAD file with questions, pipeline names are known (with a did-you-mean
hint), ``--docs-per-file`` is at least 1, and each output target (``--json``,
``--run``, ``--qrels``) is a file name (not a folder), distinct from the others, in a
folder that exists and can be written to. A bad argument, or a failure during the
work, prints one ``python -m course_lib ...: error: ...`` line (argparse's style;
argparse's own errors add its usage line) and exits with status 2. Every output file
is written atomically: it appears whole, or not at all, and no temporary file is left
behind. All of a command's output is computed before the first file is written.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cli_arguments import (
    PROG,
    _BadArgument,
    _check_distinct,
    _check_json_target,
    _check_pipeline,
    _check_pipelines,
    _check_squad,
    _check_target,
    _positive_int,
    _write_json,
)
from .data.datasets import (
    DatasetUnavailableError,
    SquadSet,
    build_knowledge_base,
    fetch_cmrc2018,
    fetch_drcd,
    load_squad,
)

# ---------------------------------------------------------------- sub-commands
# Each ``_check_*`` reads and checks its arguments (cheap; no work), and returns what its
# ``_run_*`` needs; a problem is a _BadArgument. Nothing runs before every check passed.
Checked = dict[str, Any]


def _check_none(args: argparse.Namespace) -> Checked:
    return {}


DATA_SPLITS = ("trial", "dev")  # what ``data`` fetches and verifies, in this order


def _embed_all(squads: dict[str, SquadSet]) -> None:
    """``data --embed``: fill the embedding cache for the knowledge bases notebooks use.

    ``squads`` holds every split ``data`` fetched (``"trial"``, ``"dev"``). Embedded:
    trial's knowledge base (10 paragraphs per file) and the held-out set the notebooks
    report on (:func:`~course_lib.lab.data.datasets.load_held_out_kb`: dev's first 256 paragraphs),
    and on both the swapped-subject questions of notebook 12.
    The whole dev set is not embedded here (three times the time): ``evaluate --squad``
    on it embeds what its pipeline needs, once.
    """
    from .data.datasets import load_held_out_kb
    from .data.kb_document import embed_knowledge_base
    from .measure.answerability_tiers import embed_tier_questions

    for name, kb in (("trial", build_knowledge_base(squads["trial"], 10)),
                     ("held-out dev", load_held_out_kb())):
        print(f"embedding the {name} knowledge base (once; minutes with e5, then cached) ...",
              flush=True)
        counts = embed_knowledge_base(kb)
        print("  cached: " + ", ".join(f"{n} passages and questions with {m}"
                                       for m, n in counts.items()) + " (e5: and their sentences)")
        print(f"  and {embed_tier_questions(kb)} swapped-subject questions of notebook 12 (e5)")
    from .data.settings import embed_settings

    print("embedding the second knowledge base: DRCD test (+ the held-out CMRC paragraphs), "
          "questions in both scripts (once; e5 only, then cached) ...", flush=True)
    print(f"  cached: {embed_settings():,} passages, sentences and questions with e5")
    from .measure.article_tiers import embed_article_tier_questions

    print(f"  and {embed_article_tier_questions()} swapped-subject questions of DRCD's "
          "answerability tiers (e5)")
    from ..e5_torch import E5Engine, bits_line

    print(bits_line(E5Engine()))


def _run_data(args: argparse.Namespace, checked: Checked) -> None:
    squads = {}
    for split in DATA_SPLITS:
        path = fetch_cmrc2018(split=split)
        squads[split] = load_squad(path)
        print(f"CMRC 2018 {split}: {path}")
        print(f"  {squads[split].summary()}")
    path = fetch_drcd()
    drcd = load_squad(path)
    print(f"DRCD test: {path}")
    print(f"  {len(drcd.articles)} articles, {drcd.summary()}")
    if args.embed:
        _embed_all(squads)


def _run_pipelines(args: argparse.Namespace, checked: Checked) -> None:
    from .systems.pipelines import PIPELINES
    width = max(len(name) for name in PIPELINES)
    for name, pipeline in PIPELINES.items():
        print(f"{name:<{width}}  {pipeline.description}")


def _check_evaluate(args: argparse.Namespace) -> Checked:
    pipeline = _check_pipeline(args.pipeline)
    targets = {"--json": _check_json_target(args.json),
               "--run": _check_target(args.run_file, "--run", "run.txt"),
               "--qrels": _check_target(args.qrels, "--qrels", "qrels.txt")}
    _check_distinct(targets)
    return {"pipeline": pipeline, "json": targets["--json"], "run": targets["--run"],
            "qrels": targets["--qrels"], "squad": _check_squad(args.squad)}


def _format_intervals(result: dict[str, Any]) -> str:
    """The 95 % intervals of an ``evaluate`` result, laid out under
    :func:`course_lib.lab.measure.evaluation.format_result`'s table (same rows, one column per k),
    then ``ndcg@10`` and ``map@10`` with their values."""
    bounds = result["intervals"]
    ks = sorted({int(key.split("@")[1]) for key in bounds if key.startswith("recall@")})
    lines = ["95 % interval" + " " * 7 + "".join(f"{'top ' + str(k):>18}" for k in ks)]
    for metric in ("recall", "span_recall", "mrr", "context_relevance"):
        if all(f"{metric}@{k}" in bounds for k in ks):
            lines.append(f"{metric:<20}" + "".join(
                f"{'[{:.4f}, {:.4f}]'.format(*bounds[f'{metric}@{k}']):>18}" for k in ks))
    for key in ("ndcg@10", "map@10"):
        if key in bounds:
            low, high = bounds[key]
            lines.append(f"{key:<20}{result[key]:>9.4f}  [{low:.4f}, {high:.4f}]")
    return "\n".join(lines)


def _run_evaluate(args: argparse.Namespace, checked: Checked) -> None:
    from .measure import trec
    from .measure.evaluation import evaluate, format_result
    kb = build_knowledge_base(checked["squad"], args.docs_per_file)
    keep = {"keep_rankings": True} if checked["run"] is not None else {}
    result = evaluate(kb, checked["pipeline"], **keep)
    rankings = result.pop("rankings", None)  # nodes: for the run file, not JSON
    run = (trec.run_lines(kb.questions, rankings, tag=checked["pipeline"])
           if checked["run"] is not None else None)
    qrels = trec.qrels_lines(kb.questions) if checked["qrels"] is not None else None
    print(format_result(result))
    print(_format_intervals(result))
    _write_json(result, checked["json"])
    if run is not None:
        trec.write_lines(run, checked["run"])
    if qrels is not None:
        trec.write_lines(qrels, checked["qrels"])


def _check_compare(args: argparse.Namespace) -> Checked:
    names, baseline = _check_pipelines(args.pipelines, args.baseline)
    target = _check_json_target(args.json)
    return {"pipelines": names, "baseline": baseline, "json": target,
            "squad": _check_squad(args.squad)}


def _run_compare(args: argparse.Namespace, checked: Checked) -> None:
    from .measure.comparison import compare_results, format_comparison
    from .measure.evaluation import evaluate
    kb = build_knowledge_base(checked["squad"], args.docs_per_file)
    results = {}
    for name in checked["pipelines"]:
        print(f"evaluating {name} ...", flush=True)
        results[name] = evaluate(kb, name)
    report = compare_results(results, baseline=checked["baseline"])
    print(format_comparison(report))
    _write_json(report, checked["json"])


def _check_reproduce(args: argparse.Namespace) -> Checked:
    target = _check_json_target(args.json)
    return {"json": target, "squad": _check_squad(args.squad) if args.squad else None,
            "tables": args.table}


def _run_reproduce(args: argparse.Namespace, checked: Checked) -> None:
    from .measure.reproduce import format_report, reproduce
    tables = checked["tables"]
    if checked["squad"] is None:  # the chapter's trial set, and the held-out dev set
        from .data.datasets import load_held_out_kb

        report = reproduce(build_knowledge_base(load_squad(fetch_cmrc2018()), 10), tables,
                           held_out=None if tables else load_held_out_kb(), wins=not tables)
    else:
        squad = checked["squad"]
        report = reproduce(build_knowledge_base(squad, 10), tables)
        if "skipped" not in report.get("answerability", {"skipped": ""}) and any(
                len(a.paragraph_ids) > 1 for a in squad.articles):
            from .measure.article_tiers import evaluate_article_answerability

            # Articles of several paragraphs: the sibling-kept tier exists here too.
            report["answerability"]["articles"] = evaluate_article_answerability(None,
                                                                                 squad=squad)
    print(format_report(report))
    _write_json(report, checked["json"])


def _check_ablations(args: argparse.Namespace) -> Checked:
    return {"json": _check_json_target(args.json), "settings": args.setting or None}


def _run_ablations(args: argparse.Namespace, checked: Checked) -> None:
    from .measure.stage_ablations import ablation_settings, stage_ablations
    from .measure.wins import format_win_loss, win_loss

    settings = ablation_settings()
    cases = []
    for key in checked["settings"] or list(settings):
        label, load = settings[key]
        kb = load()
        print(f"{label}: {len(kb.paragraphs)} paragraphs, {len(kb.questions)} questions; "
              f"multipath-rerank and its variants ...", flush=True)
        cases += stage_ablations(label, kb)
    rows = win_loss(cases)
    print(format_win_loss(rows, title="what each stage of multipath-rerank adds: the system "
                          "against itself without it"))
    _write_json(rows, checked["json"])


def _check_classroom(args: argparse.Namespace) -> Checked:
    from .teaching.classroom import GRADED
    from .teaching.exercises import EXERCISES

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise _BadArgument(f"--out {out} is a file; give a folder (it is created if missing)")
    parent = out.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise _BadArgument(f"--out {out}: its folder {parent} does not exist or cannot be "
                           f"written to")
    chosen = args.exercise or list(GRADED)
    unknown = [name for name in chosen if name not in EXERCISES]
    if unknown:
        raise _BadArgument(f"--exercise {unknown[0]}: not an exercise; choose from "
                           f"{', '.join(sorted(EXERCISES))}")
    exchange = Path(args.exchange) if args.exchange else None
    if exchange is not None and exchange.exists() and not exchange.is_dir():
        raise _BadArgument(f"--exchange {exchange} is a file; give a folder")
    if args.no_self_check and args.self_check not in (None, "off"):
        raise _BadArgument(f"--no-self-check and --self-check {args.self_check} contradict "
                           "each other; give one of them")
    mode = "off" if args.no_self_check else args.self_check or "auto"
    return {"out": out, "exercises": list(dict.fromkeys(chosen)), "exchange": exchange,
            "self_check": {"auto": None, "on": True, "off": False}[mode]}


def _run_classroom(args: argparse.Namespace, checked: Checked) -> None:
    from .teaching.classroom import build_classroom

    names = build_classroom(checked["out"], checked["exercises"], release=not args.no_release,
                            exchange=checked["exchange"], self_check=checked["self_check"],
                            language=args.language)
    print(f"{len(names)} assignment(s) in {checked['out']}/source"
          + ("" if args.no_release else f" and {checked['out']}/release")
          + ": see docs/teaching.md for the nbgrader commands that follow")


def _check_grade(args: argparse.Namespace) -> Checked:
    course = Path(args.course)
    if not (course / "nbgrader_config.py").is_file():
        raise _BadArgument(f"--course {course}: no nbgrader_config.py there; `make classroom` "
                           f"writes the course folder")
    if not (course / "source" / args.assignment).is_dir():
        known = sorted(p.name for p in (course / "source").glob("*") if p.is_dir())
        raise _BadArgument(f"--assignment {args.assignment}: not in {course / 'source'}; "
                           f"choose from {', '.join(known) or 'none (make classroom)'}")
    return {"course": course}


def _run_grade(args: argparse.Namespace, checked: Checked) -> None:
    from .teaching.classroom import grade_assignment

    grades = grade_assignment(checked["course"], args.assignment)
    print(f"grades of every assignment: {grades}; feedback in {checked['course']}/feedback")


def _check_answer_space(args: argparse.Namespace) -> Checked:
    from .teaching.classroom import GRADED

    unknown = [name for name in args.exercise or [] if name not in GRADED]
    if unknown:
        raise _BadArgument(f"--exercise {unknown[0]}: not a graded exercise; choose from "
                           f"{', '.join(GRADED)}")
    if not args.budget > 0:
        raise _BadArgument(f"--budget {args.budget}: give a number of seconds above 0")
    return {"exercises": list(dict.fromkeys(args.exercise or GRADED)),
            "json": _check_json_target(args.json)}


def _run_answer_space(args: argparse.Namespace, checked: Checked) -> None:
    """Each exercise's worked solution runs once; its answers go into a hashed key only."""
    from .teaching import answer_space as space_of
    from .teaching import exercises
    from .teaching.answer_keys import SolutionKey

    rows = {}
    for exercise in checked["exercises"]:
        expected, tolerance = exercises.expected_answers(exercise), \
            exercises.EXERCISES[exercise].tolerance
        exercises.forget_solution(exercise)
        space = space_of.answer_space(exercise, expected, tolerance=tolerance)
        found = space_of.brute_force(space, SolutionKey(exercise, expected, {}, tolerance)
                                     .hashed(), args.budget)
        keep, why = space_of.release_check(space, found["tries_per_s"])
        rows[exercise] = {"answers": [{"name": a.name, "family": a.family,
                                       "size": len(a.candidates)} for a in space.answers],
                          "joint": space.joint, "tries_per_s": round(found["tries_per_s"], 1),
                          "measured": found["measured"], "self_check": keep,
                          **{k: float(f"{found[k]:.3g}") for k in ("seconds", "whole_s")}}
        print(f"{exercise}: {why}; brute force "
              + (f"found them in {space_of.duration(found['seconds'])}" if found["measured"]
                 else f"estimated {space_of.duration(found['seconds'])} on average")
              + f"; release for grading: {'self-check' if keep else 'no self-check'}",
              flush=True)
    _write_json({"iterations": space_of.ITERATIONS, "budget_s": args.budget,
                 "threshold_s": space_of.THRESHOLD_S, "exercises": rows}, checked["json"])


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

    data = command("data", "fetch and verify CMRC 2018 trial and dev", _check_none, _run_data)
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
    evaluate.add_argument("--run", dest="run_file", metavar="RUN",  # not "run": main's
                          help="also write a TREC run file here (tag: the pipeline name; "
                               "for trec_eval, ir_measures, ranx)")
    evaluate.add_argument("--qrels", help="also write the TREC qrels (each question's gold "
                                          "paragraph, relevance 1) here")
    compare = command("compare", "compare pipelines on the same questions: intervals and "
                      "paired tests", _check_compare, _run_compare)
    compare.add_argument("pipelines", nargs="+", metavar="PIPELINE",
                         help="two or more pipeline names (see `pipelines`)")
    compare.add_argument("--squad", required=True, help="SQuAD-format JSON file")
    compare.add_argument("--baseline", help="test every other pipeline against this one "
                                            "(one of those named; default: the first)")
    compare.add_argument("--docs-per-file", type=_positive_int, default=10,
                         help="paragraphs per knowledge-base file (≥ 1, default 10)")
    compare.add_argument("--json", help="also write the report here (its folder must exist)")
    reproduce = command("reproduce", "the chapter's tables beside ours",
                        _check_reproduce, _run_reproduce)
    reproduce.add_argument("--squad", help="default: CMRC 2018 trial")
    reproduce.add_argument("--json", help="also write the report here (its folder must exist)")
    from .measure.reproduce import ANSWERABILITY, TABLES

    reproduce.add_argument("--table", action="append", choices=[*TABLES, ANSWERABILITY],
                           help="only this table (repeat for several); without it, every table "
                                "and the held-out dev section")
    ablations = command("ablations", "what each stage of multipath-rerank adds, on whole "
                        "sets (CMRC dev, DRCD's report half)", _check_ablations, _run_ablations)
    ablations.add_argument("--setting", action="append",
                           choices=["cmrc-dev", "drcd", "drcd-simplified"],
                           help="only this set (repeat for several; default: all three). The "
                                "first run embeds CMRC dev's paragraphs: minutes, once")
    ablations.add_argument("--json", help="also write the rows here (its folder must exist)")
    classroom = command("classroom", "an nbgrader course for a classroom lab, and its "
                        "student release", _check_classroom, _run_classroom)
    classroom.add_argument("--out", default="classroom",
                           help="the course folder (default: classroom; created if missing; "
                                "nothing in it is deleted)")
    classroom.add_argument("--exercise", action="append", metavar="NN",
                           help="only this exercise's assignment (repeat for several; default: "
                                "01-13)")
    classroom.add_argument("--language", choices=["en", "zh-CN"], default="en",
                           help="en (the default) or zh-CN: the Simplified Chinese notebooks, "
                                "questions and marking schemes, with the same grading")
    classroom.add_argument("--no-release", action="store_true",
                           help="write source/ only; do not run nbgrader generate_assignment")
    classroom.add_argument("--exchange", metavar="FOLDER",
                           help="where submissions go (default: OUT/exchange; on a shared "
                                "server a folder every user can write)")
    classroom.add_argument("--self-check", choices=["auto", "on", "off"],
                           help="auto (the default): a release checks answers only where a "
                                "brute force would not find them (docs/teaching.md); on: "
                                "every release; off: none (an exam: answers are graded after "
                                "submission only)")
    classroom.add_argument("--no-self-check", action="store_true",
                           help="the same as --self-check off")
    grade = command("grade", "collect, autograde (in a sandbox), feedback and grades.csv "
                    "for one assignment", _check_grade, _run_grade)
    grade.add_argument("--course", default="classroom",
                       help="the course folder `classroom` wrote (default: classroom)")
    grade.add_argument("--assignment", required=True, metavar="NN_name",
                       help="the assignment, e.g. 07_similarity_thresholds")
    space = command("answer-space", "how many answers each self-check lets a learner try, "
                    "and the brute force timed", _check_answer_space, _run_answer_space)
    space.add_argument("--exercise", action="append", metavar="NN",
                       help="only this exercise (repeat for several; default: 01-13)")
    space.add_argument("--budget", type=float, default=600.0, metavar="SECONDS",
                       help="search for real when the whole space takes at most this long at "
                            "the measured rate, else estimate (default 600)")
    space.add_argument("--json", help="also write the counts and times here (no answer)")
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
    except (DatasetUnavailableError, ValueError, OSError, RuntimeError) as error:
        return _fail(args.parser, str(error))
    return 0
