# Two entry points: `make demo` and `make test`. Both create .venv if missing and are safe to rerun.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PVSST  := $(VENV)/bin/pvsst
RUN    ?= runs/quickstart
SPEC   ?= experiments/specs/quickstart.yaml

.PHONY: demo test bench install install-dev clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel

# Reinstall only when pyproject.toml changes (the stamp files make reruns cheap).
$(VENV)/.installed-local: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[local]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[dev]"
	touch $@ $(VENV)/.installed-local

install: $(VENV)/.installed-local
install-dev: $(VENV)/.installed-dev

demo: install
	$(PVSST) prereg freeze $(SPEC)
	$(PVSST) run $(SPEC) --out $(RUN) --workers 2
	$(PVSST) analyze $(RUN)
	$(PVSST) report $(RUN)
	@echo "Report: $(RUN)/report/report.html (figures in $(RUN)/report/figures/)"

# Tests run on every core (pytest-xdist; worksteal: an idle worker takes tests queued on a busy one) and
# list the 15 slowest, so a slow-down shows in the CI log.
test: install-dev
	$(PY) -m pytest -q -n auto --dist worksteal --durations=15

# Benchmarks at the sizes the issues name (slow: the 100,000-agent engine run alone takes ~20 min).
bench: install-dev
	PVSST_BENCH_FULL=1 $(PY) -m pytest -q -s tests/benchmarks

clean:
	rm -rf runs .pytest_cache
