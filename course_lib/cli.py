"""Command line: ``python -m course_lib {data,pipelines,evaluate,reproduce}``.

The sub-command names and the JSON keys they write are an interface other tools
read: keep them stable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .datasets import DatasetUnavailableError, build_knowledge_base, fetch_cmrc2018, load_squad


def _write_json(data: object, path: str | None) -> None:
    if path:
        target = Path(path)
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        tmp.replace(target)


def _cmd_data(args: argparse.Namespace) -> None:
    path = fetch_cmrc2018()
    squad = load_squad(path)
    print(f"CMRC 2018 trial: {path}")
    print(f"  {len(squad.paragraphs)} paragraphs, {len(squad.questions)} questions "
          f"({len(squad.skipped)} empty skipped, {len(squad.fixed_offsets)} answer offsets fixed)")


def _cmd_pipelines(args: argparse.Namespace) -> None:
    from .pipelines import PIPELINES
    width = max(len(name) for name in PIPELINES)
    for name, pipeline in PIPELINES.items():
        print(f"{name:<{width}}  {pipeline.description}")


def _cmd_evaluate(args: argparse.Namespace) -> None:
    from .evaluation import evaluate, format_result
    kb = build_knowledge_base(load_squad(args.squad), args.docs_per_file)
    result = evaluate(kb, args.pipeline)
    print(format_result(result))
    _write_json(result, args.json)


def _cmd_reproduce(args: argparse.Namespace) -> None:
    from .reproduce import format_report, reproduce
    kb = build_knowledge_base(load_squad(args.squad or fetch_cmrc2018()), 10)
    report = reproduce(kb)
    print(format_report(report))
    _write_json(report, args.json)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib",
                                     description="Upgrading RAG recall: course tools")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("data", help="fetch and verify CMRC 2018 trial").set_defaults(run=_cmd_data)
    sub.add_parser("pipelines", help="list pipeline names").set_defaults(run=_cmd_pipelines)
    evaluate = sub.add_parser("evaluate", help="score a pipeline on a SQuAD-format file")
    evaluate.add_argument("--squad", required=True, help="SQuAD-format JSON file")
    evaluate.add_argument("--pipeline", required=True, help="see `pipelines`")
    evaluate.add_argument("--docs-per-file", type=int, default=10)
    evaluate.add_argument("--json", help="also write the result here")
    evaluate.set_defaults(run=_cmd_evaluate)
    reproduce = sub.add_parser("reproduce", help="the chapter's tables beside ours")
    reproduce.add_argument("--squad", help="default: CMRC 2018 trial")
    reproduce.add_argument("--json", help="also write the report here")
    reproduce.set_defaults(run=_cmd_reproduce)
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except (DatasetUnavailableError, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
