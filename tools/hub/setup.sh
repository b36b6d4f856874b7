#!/usr/bin/env bash
# The course on a JupyterHub server: the administrator's steps, run once as root
# (docs/teaching.md, section 4, quotes this file). `make hub-test` runs this very script, with
# the folders below under a temporary root, then starts the hub with jupyterhub_config.py.
#
# Before it: the students' accounts exist, and the course is cloned with its environment,
# made from a Python 3.11.5 or newer that every user can run — not one under /root, as
# pyenv's is; Debian 12's /usr/bin/python3 (3.11.2) is too old for the pinned packages:
#   git clone https://github.com/<you>/<this course> /srv/course
#   make -C /srv/course venv PYTHON=/opt/python3.11/bin/python3
set -euo pipefail
COURSE=${COURSE:-/srv/course}              # the clone, with its .venv
CACHE=${CACHE:-/srv/course-cache}          # the data cache: every kernel reads it, none writes
EXCHANGE=${EXCHANGE:-/srv/nbgrader/exchange}
HUB=${HUB:-/srv/jupyterhub}                # the hub's state, and the students' nbgrader settings
STUDENTS=${STUDENTS:?"give the students' login names: STUDENTS='ada ben'"}
EXERCISES=${EXERCISES:-}                   # empty: all thirteen labs; "07 08": only those

# 1. Who reads what. The course and its environment: everyone, read-only. The worked
#    solutions, the repository's history (git show HEAD:solutions/... would read them) and the
#    classroom (sources with solutions, grading keys, gradebook, submissions): the teacher
#    alone. Each student's home: that student alone (useradd's default 0755 lets every user
#    read every other's notebooks).
chmod 0755 "$COURSE"
mkdir -p "$COURSE/classroom"
chmod 0700 "$COURSE/solutions" "$COURSE/.git" "$COURSE/classroom"
for student in $STUDENTS; do
  chmod 0700 "$(getent passwd "$student" | cut -d: -f6)"
done
first=${STUDENTS%% *}
if ! runuser -u "$first" -- "$COURSE/.venv/bin/python" -c "import course_lib" 2>/dev/null; then
  echo "setup.sh: student $first cannot run $COURSE/.venv/bin/python: make the environment" \
       "from a Python every user can run (make -C $COURSE venv PYTHON=/opt/python3.11/bin/python3)" >&2
  exit 1
fi

# 2. The data, once, into the shared cache (downloads and verifies CMRC 2018 and DRCD, embeds
#    the knowledge bases: about 10 minutes on 2 cores), then read-only for everyone else.
#    Offline, with the data sets in a mirror folder: copy them into the cache first, so that
#    the students' kernels need no mirror (make data verifies them there).
mkdir -p "$CACHE/cmrc2018" "$CACHE/drcd"
if [ -n "${COURSE_DATA_MIRROR:-}" ]; then
  for name in cmrc2018/cmrc2018_trial.json cmrc2018/cmrc2018_dev.json drcd/DRCD_test.json; do
    cp "$COURSE_DATA_MIRROR/$name" "$CACHE/$name"
  done
fi
COURSE_DATA_CACHE="$CACHE" COURSE_DATA_MIRROR= make -C "$COURSE" data
chmod -R a+rX,go-w "$CACHE"

# 3. The exchange, where releases and submissions pass: every user writes it (nbgrader's own
#    checks keep a student from reading another's submission). The students' nbgrader reads
#    the course id and the exchange from $HUB/etc-jupyter (jupyterhub_config.py points
#    JUPYTER_CONFIG_PATH there).
mkdir -p "$EXCHANGE" "$HUB/etc-jupyter"
chmod 0777 "$EXCHANGE"
chmod 0755 "$HUB" "$HUB/etc-jupyter"
cat > "$HUB/etc-jupyter/nbgrader_config.py" <<CONFIG
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "rag-recall"
c.Exchange.root = "$EXCHANGE"
CONFIG
chmod 0644 "$HUB/etc-jupyter/nbgrader_config.py"

# 4. The classroom (the teacher's, in $COURSE/classroom), releasing each assignment.
COURSE_DATA_CACHE="$CACHE" make -C "$COURSE" classroom EXCHANGE="$EXCHANGE" \
  ${EXERCISES:+EXERCISES="$EXERCISES"}
cd "$COURSE/classroom"
for assignment in source/*/; do
  "$COURSE/.venv/bin/nbgrader" release_assignment "$(basename "$assignment")" --force \
    --log-level=WARN
done
echo "set up: the hub starts with  $COURSE/.venv/bin/jupyterhub -f $COURSE/tools/hub/jupyterhub_config.py"
