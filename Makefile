# The two commands: `make demo` and `make test`. Each sets up what it needs first.
.PHONY: setup demo test bench lint clean web

PY := .venv/bin/python

setup:
	@bash tools/bootstrap.sh

demo: setup
	@.venv/bin/buildbench demo

# Lint first: a type or style error fails the tests too (ruff + mypy take under a minute).
test: setup lint
	@$(PY) -m pytest -n 2 --dist loadgroup -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: no tests were collected" >&2; exit 1; fi; exit $$rc

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
