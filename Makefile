# The two commands: `make demo` and `make test`. Each sets up what it needs first.
.PHONY: setup demo test test-pythons bench lint clean web

PY := .venv/bin/python

setup:
	@bash tools/bootstrap.sh

demo: setup
	@.venv/bin/buildbench demo

# Lint first: a type or style error fails the tests too (ruff + mypy take under a minute).
# The whole suite on 3.11 (.venv), then the fast subset on the other supported Pythons; the 30
# slowest tests are listed at the end (CI must stay under 30 minutes on 2 cores).
test: setup lint
	@$(PY) -m pytest -n 2 --dist loadgroup -q --durations=30; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: no tests were collected" >&2; exit 1; fi; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi
	@$(MAKE) --no-print-directory test-pythons

# The smoke subset (tests marked smoke: imports, CLI, one demo run per suite) on Python 3.12 and
# 3.13, each in its own .venv-X.Y (tools/python_venvs.sh; a missing interpreter is skipped, said).
PYTHONS := 3.12 3.13
test-pythons:
	@bash tools/python_venvs.sh $(PYTHONS)
	@for v in $(PYTHONS); do \
	  [ -x .venv-$$v/bin/python ] || continue; \
	  echo "make test-pythons: Python $$v"; \
	  .venv-$$v/bin/python -m pytest -n 2 -q -m smoke tests/test_pythons.py || exit 1; \
	done

# Each benchmark in its own process; `make bench BENCH="legoeval render"` runs those whose names contain a word.
bench: setup
	@$(PY) benchmarks/run.py $(BENCH)

lint: setup
	@.venv/bin/ruff check src tests benchmarks
	@.venv/bin/mypy src/buildbench

# The viewer's front-end (web/, npm) is bundled into src/buildbench/web/static, which is
# committed; this rebuilds it from the lockfile (needs node and npm).
web:
	@cd web && npm ci --no-audit --no-fund && npm run build

clean:
	rm -rf .venv runs bench-results .pytest_cache .hypothesis
