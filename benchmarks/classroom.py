"""`make bench-classroom STUDENTS=4`: a class working at once on a real JupyterHub — what a
server must hold.

It starts the course's hub as `make hub-test` does (tools/classroom_hub.py: the guide's
setup.sh and jupyterhub_config.py under a temporary root; root only), with STUDENTS students
as separate system users. Each student's server (spawned by the hub, running as that user)
gets a copy of the course's notebooks, and all students at the same moment run the labs in
order (``--labs``, default all), each notebook in its own kernel through the kernel's
websocket, as JupyterLab's Run All does; charts are drawn as PNG by plotly's exporter, so its
headless Chromium runs inside each student's kernel as it does for a learner.

Every 0.5 s it reads ``/proc`` and records, per student (every process of that user: the
single-user server, the kernel, Chromium):

* ``peak_pss_mb``: the peak of the sum of their processes' proportional set size
  (``Pss`` of ``/proc/<pid>/smaps_rollup``): memory shared between students (the same
  libraries, the same model files mapped) is split between them, so the students' sums
  add up to what the machine holds;
  per lab also ``peak_parts_mb``, that peak by kind of process (``server``, ``kernel``,
  ``chromium``, ``other``);
* ``cpu_s``: user + system seconds, summed over every process of theirs seen (each at its
  last reading; a process that lived less than 0.5 s is missed);
* ``wall_s``: from their first cell to their last.

and the hub's own memory (jupyterhub and its proxy: ``hub_pss_mb``, peak). Writes
``benchmarks/classroom_resources.json`` (one entry per class size, others kept) and
prints a table. Nothing here is a unit test: the numbers are a measurement of one run.

    python benchmarks/classroom.py --students 4 [--labs 07 08]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pwd
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))
import classroom_hub  # noqa: E402

OUT = HERE / "classroom_resources.json"
# A process's kind, by its command name (/proc/<pid>/comm: at most 15 characters).
PARTS = {"jupyterhub-sing": "server", "python": "kernel", "chromium": "chromium",
         "chrome": "chromium", "chrome_crashpad": "chromium"}
MB = 1e6
TICK = os.sysconf("SC_CLK_TCK")

COPY_LABS = """
import os, shutil
from pathlib import Path
lab = Path.home() / "lab"
shutil.copytree({notebooks!r}, lab / "notebooks")
os.symlink({benchmarks!r}, lab / "benchmarks")  # notebook 11 reads ../benchmarks
print("copied")
"""


def processes() -> dict[int, tuple[int, float, float, str]]:
    """pid -> (uid, PSS in bytes, CPU seconds, command name) of every process readable now."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            uid = int((entry / "status").read_text().split("\nUid:")[1].split()[0])
            pss = 0
            for line in (entry / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
                    break
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / TICK
            command = (entry / "comm").read_text().strip()
        except (OSError, IndexError, ValueError):
            continue
        found[int(entry.name)] = (uid, pss, cpu, command)
    return found


class Sampler(threading.Thread):
    """Reads /proc every 0.5 s: per-user PSS sums and per-process CPU, and the hub's PSS."""

    def __init__(self, uids: dict[int, str], hub: classroom_hub.Hub) -> None:
        super().__init__(daemon=True)
        self.uids, self.hub = uids, hub
        self.peak = dict.fromkeys(uids.values(), 0)
        self.lab = dict.fromkeys(uids.values(), "")  # the lab each student is running
        self.lab_peak: dict[tuple[str, str], int] = {}
        # at each lab's peak, the student's PSS by kind of process (server, kernel, Chromium)
        self.lab_parts: dict[tuple[str, str], dict[str, int]] = {}
        self.cpu: dict[str, dict[int, float]] = {name: {} for name in uids.values()}
        self.hub_peak = 0
        self.stop = threading.Event()

    def cpu_s(self, name: str) -> float:
        """CPU seconds of ``name``'s processes so far (each at its last reading)."""
        return sum(self.cpu[name].values())

    def run(self) -> None:
        while not self.stop.is_set():
            now = processes()
            sums = dict.fromkeys(self.uids.values(), 0)
            parts: dict[str, dict[str, int]] = {name: {} for name in self.uids.values()}
            for pid, (uid, pss, cpu, command) in now.items():
                if uid in self.uids:
                    name = self.uids[uid]
                    sums[name] += pss
                    self.cpu[name][pid] = cpu
                    kind = PARTS.get(command, "other")
                    parts[name][kind] = parts[name].get(kind, 0) + pss
            for name, total in sums.items():
                self.peak[name] = max(self.peak[name], total)
                at = (name, self.lab[name])
                if total > self.lab_peak.get(at, 0):
                    self.lab_peak[at], self.lab_parts[at] = total, parts[name]
            hub_pss = sum(now[pid][1] for pid in self.hub.server_pids()
                          if pid in now and now[pid][0] not in self.uids)
            self.hub_peak = max(self.hub_peak, hub_pss)
            time.sleep(0.5)


def run_labs(student: classroom_hub.Student, labs: list[str], sampler: Sampler) -> dict:
    """Run ``labs`` in order in ``student``'s server; per lab: wall, CPU, peak PSS."""
    started = time.monotonic()
    errors, per_lab = [], {}
    for lab in labs:
        sampler.lab[student.name] = lab
        time.sleep(0.6)  # one sample of the lab before its first cell
        lab_start, cpu_start = time.monotonic(), sampler.cpu_s(student.name)
        executed = student.run_notebook(f"lab/notebooks/{lab}")
        wall = time.monotonic() - lab_start
        time.sleep(0.6)  # one more sample (the kernel has stopped: its last 0.5 s is missed)
        errors += [f"{lab}: {o.ename}" for c in executed.cells if c.cell_type == "code"
                   for o in c.outputs if o.output_type == "error"]
        per_lab[lab[:2]] = {"wall_s": round(wall, 1),
                            "cpu_s": round(sampler.cpu_s(student.name) - cpu_start, 1),
                            "peak_pss_mb": round(sampler.lab_peak.get((student.name, lab), 0)
                                                 / MB),
                            "peak_parts_mb": {kind: round(pss / MB) for kind, pss in
                                              sampler.lab_parts.get((student.name, lab),
                                                                    {}).items()}}
        print(f"  {student.name}: {lab} in {wall:.0f} s", flush=True)
    return {"wall_s": round(time.monotonic() - started, 1), "errors": errors, "labs": per_lab}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=4)
    parser.add_argument("--labs", nargs="*", default=None,
                        help="notebook numbers (default: every notebook, 00 to the last)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not 1 <= args.students <= 50:
        parser.error(f"--students must be between 1 and 50, got {args.students}")
    reason = classroom_hub.why_not_runnable()
    if reason:
        sys.exit(f"bench-classroom: {reason}")
    all_labs = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    labs = [n for n in all_labs if args.labs is None or n[:2] in args.labs]
    if not labs:
        parser.error(f"--labs {' '.join(args.labs)}: no such notebooks; known: "
                     f"{' '.join(n[:2] for n in all_labs)}")
    names = [f"bench-s{i}" for i in range(1, args.students + 1)]
    with classroom_hub.Hub(names, exercises=["01"]) as hub:
        students = [hub.spawn(name) for name in names]
        for student in students:
            student.run_code(COPY_LABS.format(notebooks=str(hub.course / "notebooks"),
                                              benchmarks=str(hub.course / "benchmarks")))
        sampler = Sampler({pwd.getpwnam(n).pw_uid: n for n in names}, hub)
        sampler.start()
        with ThreadPoolExecutor(len(students)) as pool:
            runs = list(pool.map(lambda s: run_labs(s, labs, sampler), students))
        sampler.stop.set()
        sampler.join()
    rows = [{"student": name, "peak_pss_mb": round(sampler.peak[name] / MB),
             "cpu_s": round(sum(sampler.cpu[name].values()), 1), **run}
            for name, run in zip(names, runs, strict=True)]
    entry = {"students": args.students, "labs": [n[:2] for n in labs],
             "hub_pss_mb": round(sampler.hub_peak / MB), "rows": rows,
             "measured": datetime.now(UTC).strftime("%Y-%m-%d"),
             "machine": {"cores": os.cpu_count(), "cpu": platform.processor() or "",
                         "ram_gb": round(os.sysconf("SC_PAGE_SIZE")
                                         * os.sysconf("SC_PHYS_PAGES") / 1e9),
                         "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "")}}
    old = json.loads(args.out.read_text()) if args.out.exists() else {"runs": []}
    kept = [r for r in old["runs"] if r["students"] != args.students]
    data = {"runs": sorted([*kept, entry], key=lambda r: r["students"])}
    partial = args.out.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(partial, args.out)
    print("| student | peak PSS (MB) | CPU (s) | wall (s) | errors |\n|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['student']} | {row['peak_pss_mb']} | {row['cpu_s']} | {row['wall_s']} "
              f"| {len(row['errors'])} |")
    print(f"hub (jupyterhub + proxy): peak PSS {entry['hub_pss_mb']} MB -> {args.out}")


if __name__ == "__main__":
    main()
