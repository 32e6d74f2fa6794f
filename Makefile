# carom: the two quick-start commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed
BENCH   = $(VENV)/.installed-bench

.PHONY: demo test lint bench clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

$(BENCH): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH)

demo: $(STAMP)
	$(VENV)/bin/carom warmup
	$(VENV)/bin/carom demo --out carom-demo

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

test: lint
	$(PY) -m pytest -n 2 -q

bench: $(BENCH)
	$(PY) benchmarks/run.py
	$(PY) benchmarks/piles.py
	$(PY) benchmarks/piles.py --dim 2 --until 10 --friction 0.5
	$(PY) benchmarks/piles.py --dim 3 --until 3 --friction 0.5
	$(PY) benchmarks/polygon_toi.py
	$(PY) benchmarks/polygon_stacks.py
	$(PY) benchmarks/billiards.py
	$(PY) benchmarks/orbits.py
	$(PY) benchmarks/tree_gravity.py

clean:
	rm -rf $(VENV) carom-demo .pytest_cache
