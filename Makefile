# GEMM Lab — every workflow of the course kit. `make help` lists the targets.
# Each target creates the local virtual environment (.venv) with the exact pinned versions of
# pyproject.toml's `course` extra when it is missing or older than pyproject.toml.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# nbgrader calls scripts of its environment (alembic) by name
export PATH := $(abspath $(VENV))/bin:$(PATH)
STAMP := $(VENV)/.installed
JOBS ?= 2
ASSIGNMENTS := $(notdir $(wildcard source/week*))
# make collect: no default FROM (the demo passes its own samples); PATTERN reaches autograder/collect/handins.py from the environment
FROM ?=
ASSIGNMENT ?=
PATTERN ?=
export PATTERN
LMS ?=
# make grades FROM=<the LMS's own grade file>: the column to fill when its title is not the assignment's name,
# COMMENT=1 (Moodle): a feedback comment for students whose written answers await grading
COLUMN ?=
COMMENT ?=
# Where the course is published. Empty: keep the setting in gemm_lab/__init__.py (COURSE_URL, COURSE_REF).
# make release COURSE_URL=https://github.com/<org>/<repo> COURSE_REF=<tag or commit> stamps it there and
# into the Colab badges, the set-up cell's install line and the results refresh URL.
COURSE_URL ?=
COURSE_REF ?=
COURSE_ARGS := $(if $(COURSE_URL),--course-url $(COURSE_URL)) $(if $(COURSE_REF),--course-ref $(COURSE_REF))
# version sets `make compat` checks, each in its own venv beside torch 2.13.0 (CPU build): Colab's pairing,
# the course pins, the newest triton 3.8 and the newest triton in the package index (specifiers resolved
# when it runs; NAME[:REQ,...], tools/compat_sets.py); the table goes into COMPAT_README (empty: nowhere)
COMPAT_SETS ?= colab:triton==3.6.*,numpy==2.1.*,ipywidgets==7.7.1 pinned 3.8:triton==3.8.* newest:triton
COMPAT_OUT ?= build/compat
COMPAT_README ?= README.md

.DEFAULT_GOAL := help
.PHONY: help setup sandbox-deps browser-deps demo test test-fast lint notebooks release check-release \
        collect autograde bench-grading feedback formgrader grades report bench examples lab compat classic-venv wheel clean clean-all

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[course]'
	@touch $(STAMP)

setup: $(STAMP) sandbox-deps browser-deps ## create .venv with the pinned versions (+ bubblewrap, chromium)

sandbox-deps: ## install bubblewrap (the autograder's sandbox) when it is missing
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq >/dev/null && $$SUDO apt-get install -y -qq bubblewrap >/dev/null; }
	@command -v bwrap >/dev/null 2>&1 && echo "sandbox: $$(bwrap --version)"

browser-deps: ## install chromium, chromium-driver and Noto CJK fonts (browser test, Korean plots)
	@{ command -v chromium && command -v chromedriver && fc-list | grep -q "Noto Sans CJK"; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq >/dev/null && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver fonts-noto-cjk >/dev/null; }
	@command -v chromedriver >/dev/null 2>&1 && echo "browser: $$(chromedriver --version | cut -d' ' -f1-2)"

demo: setup ## the main job: build the release, autograde the sample hand-ins, print the grade table
	$(PY) -m autograder demo

test: setup ## the whole test suite (CPU only; notebooks, nbgrader round trip, autograder samples)
	$(PY) -m ruff check gemm_lab tests tools autograder scripts setup.py
	$(PY) -m pytest -n $(JOBS) --timeout=900 -q

test-fast: setup ## the tests not marked slow
	$(PY) -m pytest -n $(JOBS) -q -m "not slow"

lint: setup ## ruff
	$(PY) -m ruff check gemm_lab tests tools autograder scripts setup.py

notebooks: setup ## build every .ipynb from its jupytext master (source/, notebooks/) [COURSE_URL= COURSE_REF=]
	$(PY) tools/build_notebooks.py $(COURSE_ARGS)

release: notebooks ## source/ → release/ (nbgrader); COURSE_URL=https://github.com/<org>/<repo> COURSE_REF=<tag>
	$(PY) -m tools.release $(ASSIGNMENTS)

check-release: setup ## fail when release/ is stale, holds a solution, a notebook has outputs, or a grade id shows an answer
	$(PY) -m tools.release --check $(ASSIGNMENTS)

collect: setup ## import hand-ins: make collect FROM=<LMS download zip or folder> [ASSIGNMENT=week07] [PATTERN=regex]
	@$(PY) -m autograder collect $(ASSIGNMENT) "$(FROM)"

autograde: setup ## grade every collected hand-in (sandboxed, one pool over every hand-in of every week)
	GEMM_LAB_SCHEDULER=$(SCHEDULER) $(PY) -m autograder autograde $(if $(GRADE_JOBS),--jobs $(GRADE_JOBS)) $(if $(GRADE_HANDIN_MEMORY_GB),--handin-memory-gb $(GRADE_HANDIN_MEMORY_GB)) $(if $(GRADE_UNIT),--unit $(GRADE_UNIT))  # GRADE_JOBS default: min(CPUs + 1, free memory / GRADE_HANDIN_MEMORY_GB (6)); SCHEDULER=tcp://host:8786: Dask

bench-grading: setup ## class-scale grading benchmark: N synthetic students (default 100), both weeks -> results/grading_throughput.{csv,md}; run on a quiet machine
	$(PY) -m autograder bench-grading -n $(or $(N),100) $(if $(GRADE_JOBS),--jobs $(GRADE_JOBS)) $(if $(NOTEBOOK),--notebook $(NOTEBOOK)) $(if $(OUT),--out $(OUT)) $(if $(GRADE_UNIT),--unit $(GRADE_UNIT))

feedback: setup ## HTML feedback per student under autograder/feedback/; LMS=canvas|moodle: + autograder/feedback_<lms>_<ASSIGNMENT>.zip to upload
	@$(PY) -m autograder feedback $(ASSIGNMENT) $(if $(LMS),--lms "$(LMS)")

formgrader: setup ## after make autograde: JupyterLab with nbgrader's formgrader on the course, to grade written answers
	@test -f autograder/gradebook.db || { echo "no gradebook yet: run make collect FROM=<LMS download> and make autograde first" >&2; exit 1; }
	@echo "formgrader: open the URL below, then menu Nbgrader -> Formgrader (or <URL without /lab>/formgrader): Manage Assignments -> ASSIGNMENT -> Manual grading; Ctrl-C here when done, then make grades. Its Autograde and Generate Feedback buttons are off here (they would bypass the sandbox): make autograde, make feedback"
	$(VENV)/bin/jupyter lab --no-browser $(if $(filter 0,$(shell id -u)),--allow-root) --ServerApp.root_dir=.

grades: setup ## grade table + autograder/grades.csv; LMS=canvas|moodle|blackboard [FROM=<that LMS's own grade file>]: the file it imports
	@$(PY) -m autograder grades $(if $(LMS),--lms "$(LMS)") $(if $(FROM),--from "$(FROM)" $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)") $(if $(COLUMN),--column "$(COLUMN)") $(if $(filter 1 yes,$(COMMENT)),--comment))

report: setup ## class report after autograde: autograder/report/ASSIGNMENT.html, _class.html (no ids), PNG, _items.csv [ASSIGNMENT=]
	@$(PY) -m autograder report $(ASSIGNMENT)

leaderboard: setup ## GPU host: time each graded week07 matmul kernel beside torch.matmul (ungraded); results/leaderboard_*
	$(PY) -m autograder leaderboard --assignment $(or $(ASSIGNMENT),week07) --out results

bench: setup ## GPU benchmark sweep on whatever GPU is here; writes results/
	$(PY) -m gemm_lab.bench --out results
	$(PY) scripts/results_tables.py

examples: setup ## print every worked example and exercise answer of the seeds (gemm_lab.calc)
	$(PY) -m gemm_lab.calc

lab: setup ## open JupyterLab on the students' notebooks (release/); instructors: source/, notebooks/
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) release

wheel: setup ## build dist/gemm_lab-*.whl (carries results/*.csv as package data)
	$(PY) -m pip wheel --no-deps --no-build-isolation -w dist .

compat: setup ## maintainers: notebooks, calc, kernels, cross-compile markers, new warnings per COMPAT_SETS
	$(PY) tools/compat.py --out '$(COMPAT_OUT)' $(if $(COMPAT_README),--readme '$(COMPAT_README)') \
	  $(foreach s,$(COMPAT_SETS),'$(s)')

classic-venv: ## maintainers: classic notebook 6.5.7 + ipywidgets 7.7.1 (Colab's set) for the browser test (network install)
	@test -x build/classic-venv/bin/python || $(PYTHON) -m venv build/classic-venv
	build/classic-venv/bin/python -m pip install -q notebook==6.5.7 ipywidgets==7.7.1 ipykernel matplotlib numpy pandas

# every file holding student names, LMS ids, hand-ins, grades or feedback (all ignored by git); the gradebook
# (autograder/gradebook.db: formgrader's manual grades) only by clean-all
STUDENT_DATA := autograder/submitted autograder/autograded autograder/feedback autograder/work autograder/logs \
                autograder/report autograder/downloads autograder/grades* autograder/feedback_*.zip \
                $(filter-out %_demo.csv %_demo.png,$(wildcard results/leaderboard_*))

clean: ## remove caches and every student file the kit wrote (hand-ins, grades, feedback, zips); keeps the gradebook
	rm -rf .pytest_cache .ruff_cache .hypothesis $(STUDENT_DATA)
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	@test ! -e autograder/gradebook.db || echo "kept autograder/gradebook.db (scores and formgrader's manual grades): make clean-all removes it"

clean-all: clean ## make clean + the gradebook itself (asks first; CONFIRM=yes to skip the question)
	@test -e autograder/gradebook.db || exit 0; \
	if [ "$(CONFIRM)" != yes ]; then \
	  read -r -p "remove autograder/gradebook.db with every score and manual grade? type yes: " answer || answer=; \
	  [ "$$answer" = yes ] || { echo "kept autograder/gradebook.db" >&2; exit 1; }; \
	fi; \
	rm -f autograder/gradebook.db autograder/gradebook.db-*; echo "removed autograder/gradebook.db"
