"""JupyterHub for the course: every student's server runs the course's environment.

Start it as root after ``setup.sh``::

    COURSE=/srv/course CACHE=/srv/course-cache HUB=/srv/jupyterhub STUDENTS="ada ben" \\
        /srv/course/.venv/bin/jupyterhub -f /srv/course/tools/hub/jupyterhub_config.py

Students log in with their system accounts (JupyterHub's default, PAM) and each gets a
server running as their own user (LocalProcessSpawner), in their home. ``make hub-test``
starts the hub with this file too (tools/classroom_hub.py adds only a test login, a port and
an API token for itself). What it does not set up: HTTPS (put the hub behind your web
server's TLS, or set ``c.JupyterHub.ssl_cert``/``ssl_key``), and per-user CPU and memory
limits (LocalProcessSpawner has none: docs/teaching.md, section 5, sizes the server).
"""

import os

COURSE = os.environ.get("COURSE", "/srv/course")
CACHE = os.environ.get("CACHE", "/srv/course-cache")
HUB = os.environ.get("HUB", "/srv/jupyterhub")

c = get_config()  # noqa: F821 (JupyterHub provides it)
# Students log in with their passwords: listen on this machine only, behind your web server's
# TLS (HUB_URL=http://:8000 listens on every interface, in plain HTTP).
c.JupyterHub.bind_url = os.environ.get("HUB_URL", "http://127.0.0.1:8000")
# The hub's own state, out of the course folder.
c.JupyterHub.db_url = f"sqlite:///{HUB}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = f"{HUB}/jupyterhub_cookie_secret"
c.ConfigurableHTTPProxy.pid_file = f"{HUB}/jupyterhub-proxy.pid"
# configurable-http-proxy comes from npm (`npm install -g configurable-http-proxy`).
c.ConfigurableHTTPProxy.command = [os.environ.get("CHP", "configurable-http-proxy")]
c.Authenticator.allowed_users = set(os.environ.get("STUDENTS", "").split())
c.Authenticator.admin_users = set(os.environ.get("TEACHERS", "").split())

# Each student's server: the course's environment (it has jupyterhub-singleuser, nbgrader's
# Assignments tab and the course's kernel), JupyterLab, in the student's home.
c.Spawner.cmd = [f"{COURSE}/.venv/bin/jupyterhub-singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.http_timeout = 120  # a busy server takes longer than the default 30 s to start one
c.Spawner.environment = {
    "PATH": f"{COURSE}/.venv/bin:/usr/local/bin:/usr/bin:/bin",
    "COURSE_DATA_CACHE": CACHE,  # read-only: filled once by setup.sh
    "JUPYTER_CONFIG_PATH": f"{HUB}/etc-jupyter",  # nbgrader's course id and exchange
    "OMP_NUM_THREADS": "2",  # each kernel at most two cores
    "HF_HUB_OFFLINE": "1",  # the course's models ship in its packages: no model hub
    "TRANSFORMERS_OFFLINE": "1",
}
