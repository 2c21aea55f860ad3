# The README's commands.  `make demo` sets everything up and serves the app; `make test`
# runs the whole suite on every core (SQLite; set DATABASE_URL for PostgreSQL).
# the interpreter that creates .venv: python3.11 where installed, else python3 (>= 3.11)
PYTHON ?= $(shell command -v python3.11 2>/dev/null || echo python3)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test test-quick test-noaccel check-accel install lint fuzz bench migrate serve clean \
  messages

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml setup.py evaluation/metrics/_fastparse.c | $(PY)
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

migrate: install
	$(PY) manage.py migrate --noinput -v0
	$(PY) manage.py createcachetable

# the demo runs with DEBUG on (settings default to production: DEBUG off) and one job worker
# (the database queue) beside Django's server; Ctrl+C stops both: the terminal's SIGINT and
# the trap's SIGTERM make two signals, so a job running then is failed at once, nothing
# written (a worker given one SIGTERM finishes its job first); make returns once the worker
# has exited
demo: export DJANGO_DEBUG := 1
demo: install migrate
	$(PY) manage.py load_demo
	@echo ""
	@echo "  QA synsets demo: http://$(HOST):$(PORT)/"
	@echo "  log in as organizer / demo-organizer, assessor1 / demo-assessor1,"
	@echo "  assessor2 / demo-assessor2, participant / demo-participant, admin / demo-admin"
	@echo "  background jobs (uploads, imports, reports) run in a worker started beside it"
	@echo ""
	@$(PY) manage.py jobs_worker -v0 & worker=$$!; \
	  trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	  $(PY) manage.py runserver $(HOST):$(PORT)

# on every core (pytest-xdist, -n auto): each worker has its own test database; the tests
# of one xdist_group (the fault tests) run on one worker, one after another
test: install
	$(VENV)/bin/pytest -n auto --dist loadgroup

# a quick check while working: the suite without the tests marked slow (browser tests,
# subprocesses, large generated inputs); make test and CI run them all
test-quick: install
	$(VENV)/bin/pytest -n auto --dist loadgroup -m "not slow"

# fail unless the optional C accelerator was built (CI needs both reader paths tested)
check-accel: install
	@$(PY) -c "import evaluation.metrics._fastparse" || { \
	  echo "the C accelerator evaluation/metrics/_fastparse was not built (is a C compiler" \
	       "and Python.h installed? see: $(PY) -m pip install -v -e .)" >&2; exit 1; }

# the scorer's tests and the parser fuzz tests with the C accelerator switched off
test-noaccel: install
	QASYNSET_NO_ACCEL=1 $(VENV)/bin/pytest -q -p no:cacheprovider -n auto tests/metrics \
	  tests/fuzz/test_parsers_fuzz.py

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	git ls-files -z 'templates/*.html' | xargs -0 $(VENV)/bin/djhtml --check
	git ls-files -z '*.py' ':!:*/migrations/*' | xargs -0 $(VENV)/bin/django-upgrade --target-version 5.2
	$(VENV)/bin/lint-imports --no-cache

# the translations (README "Languages"): every marked string of the Python code, the
# templates and the scripts into locale/<language>/LC_MESSAGES/*.po (translate what is new
# there), then compiled into the .mo files the app reads (committed: `make demo` needs no
# gettext).  Needs GNU gettext (Debian: apt-get install gettext).
MESSAGES_IGNORE := --ignore=.venv --ignore=bench --ignore=tests --ignore=var \
  --ignore=staticfiles --ignore=static/vendor --ignore=build --ignore=docs
messages: export DJANGO_DEBUG := 1
messages: install
	$(PY) manage.py makemessages -a -d django --no-obsolete $(MESSAGES_IGNORE)
	$(PY) manage.py makemessages -a -d djangojs --no-obsolete $(MESSAGES_IGNORE)
	$(PY) manage.py compilemessages --ignore=.venv
	$(PY) -m pytest -q -p no:cacheprovider tests/test_translations.py

# 15 parser fuzz tests x 12,500 generated inputs (> 100,000 in all) plus the upload page
fuzz: install
	FUZZ_EXAMPLES=12500 $(VENV)/bin/pytest -q -p no:cacheprovider tests/fuzz

bench: install
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	$(PY) bench/score_bench.py
	$(PY) bench/qa_score_bench.py

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm staticfiles test-artifacts

# load test: gunicorn + PostgreSQL on 127.0.0.1 (bench/README.md); DURATION in seconds
.PHONY: load
DURATION ?= 120
load: install
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	$(PY) bench/load.py --duration $(DURATION)
