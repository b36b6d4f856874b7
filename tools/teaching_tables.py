"""The measured tables of docs/teaching.md: each lab's time, memory and CPU, and how many
students a server holds — computed from ``benchmarks/notebook_resources.json`` (written by
``make bench``) and the lab times in the README's notebook table.

    python tools/teaching_tables.py          # print the tables docs/teaching.md holds
    python tools/teaching_tables.py --write  # put them into docs/teaching.md

A test (tests/test_teaching_guide.py) checks that the guide holds exactly this output.

The sizing model, stated so a teacher can redo it for another server:

* **memory**: every student holds one Jupyter server (``SERVER_MB``, measured: JupyterLab
  with nbgrader's extensions, idle) and one kernel at the notebook's peak (its Run All);
  ``HEADROOM`` of the RAM is left to the system. Students = usable RAM / per student.
* **CPU**: everyone presses Run All at once. Each kernel is capped at 2 threads
  (``OMP_NUM_THREADS=2``), so with more students than half the cores they share: the
  Run Alls finish after about (students × CPU seconds) / cores. Students = the number for
  whom that stays within ``PATIENCE_S``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "benchmarks" / "notebook_resources.json"
SERVER_MB = 130  # a single-user JupyterLab server with nbgrader's extensions, idle (VmRSS)
HEADROOM = 0.10  # of the RAM, for the system
PATIENCE_S = 120  # a Run All, all students at once, should finish within 2 minutes
SERVERS = ((16, 64), (32, 128), (64, 256))  # (cores, GB) of the servers sized
BEGIN, END = "<!-- measured: begin -->", "<!-- measured: end -->"


def lab_times() -> dict[str, str]:
    """Each notebook's time from the README's notebook table (``| `NN_name` | ... | 40 min |``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `(\d\d_\w+)` \|.*\| ([^|]+?) \|$", text, flags=re.M))


def students(rss_mb: float, cpu_s: float, cores: int, ram_gb: float) -> tuple[int, int]:
    """(by memory, by CPU) students a server of ``cores`` and ``ram_gb`` holds at once.

    >>> students(1000, 60, 16, 64)
    (50, 32)
    """
    by_memory = math.floor((1 - HEADROOM) * ram_gb * 1000 / (rss_mb + SERVER_MB))
    by_cpu = math.floor(cores * PATIENCE_S / cpu_s)
    return by_memory, by_cpu


def tables() -> str:
    data = json.loads(RESOURCES.read_text(encoding="utf-8"))
    rows, machine = data["notebooks"], data["machine"]
    times = lab_times()
    baseline = rows["kernel start-up"]
    lines = [f"Measured by `make bench` on {machine['cores']} cores "
             f"({machine['cpu_model']}), OMP_NUM_THREADS={machine['OMP_NUM_THREADS']}, warm "
             f"cache; a kernel that has only started holds {baseline['peak_rss_mb']:.0f} MB.",
             "",
             "| lab | time | peak memory (MB) | CPU (s) | Run All (s) | "
             + " | ".join(f"students, {c} cores / {g} GB" for c, g in SERVERS) + " |",
             "|---|---|---|---|---|" + "---|" * len(SERVERS)]
    for name, row in rows.items():
        if name == "kernel start-up":
            continue
        sized = []
        for cores, gb in SERVERS:
            by_memory, by_cpu = students(row["peak_rss_mb"], row["cpu_s"], cores, gb)
            bound = "memory" if by_memory < by_cpu else "CPU"
            sized.append(f"{min(by_memory, by_cpu)} ({bound})")
        lines.append(f"| `{name}` | {times.get(name, '—')} | {row['peak_rss_mb']:.0f} | "
                     f"{row['cpu_s']:.0f} | {row['wall_s']:.0f} | " + " | ".join(sized) + " |")
    return "\n".join(lines)


def block() -> str:
    """The tables as they stand between the guide's markers."""
    return f"{BEGIN}\n{tables()}\n{END}"


GUIDE = ROOT / "docs" / "teaching.md"


def write() -> None:
    """Replace what stands between the guide's markers with today's tables."""
    from course_lib.store.safe_folder import write_text_atomically

    text = GUIDE.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    write_text_atomically(GUIDE, text[:start] + block() + text[end:])


if __name__ == "__main__":
    import sys

    if "--write" in sys.argv[1:]:
        write()
    else:
        print(tables())
