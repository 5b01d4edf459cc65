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
	$(PY) -m pip install -q --upgrade pip
	-$(PY) -m pip install -q uv

# pip installs llama-cpp-python: it compiles from source the first time (~12 min) and pip's wheel cache
# makes every later install take seconds. uv then installs the rest with its bytecode in under a minute
# (pip takes ~2.5 minutes; both resolve the same versions). Without uv (no wheel for this platform) or if
# it fails, pip does it all. LLAMA_BOUND repeats pyproject.toml's bound on llama-cpp-python; if they ever
# differ, uv builds what it needs.
LLAMA_BOUND := >=0.3.0
define install_extra
	$(PY) -m pip install -q "$(2)"
	if [ -x $(VENV)/bin/uv ] && $(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) -e ".[$(1)]"; then :; \
	else $(PY) -m pip install -q -e ".[$(1)]"; fi
endef

# Reinstall only when pyproject.toml changes (the stamp files make reruns cheap).
$(VENV)/.installed-local: pyproject.toml | $(PY)
	$(call install_extra,local,llama-cpp-python$(LLAMA_BOUND))
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(call install_extra,dev,llama-cpp-python[server]$(LLAMA_BOUND))
	touch $@ $(VENV)/.installed-local

# The project's bytecode, compiled before a run: where PYTHONDONTWRITEBYTECODE is set (as on this
# project's machines) Python never writes it, so every process started (process-pool and Ray workers,
# CLI runs) would compile the modules it imports again (~0.5 s of CPU each; any edit invalidates it).
COMPILE := $(PY) -m compileall -q sim personas experiments analysis tests

install: $(VENV)/.installed-local
install-dev: $(VENV)/.installed-dev

demo: install
	$(COMPILE)
	$(PVSST) prereg freeze $(SPEC)
	$(PVSST) run $(SPEC) --out $(RUN) --workers 2
	$(PVSST) analyze $(RUN)
	$(PVSST) report $(RUN)
	@echo "Report: $(RUN)/report/report.html (figures in $(RUN)/report/figures/)"

# Tests run on every core (pytest-xdist; worksteal: an idle worker takes tests queued on a busy one) and
# list the 15 slowest, so a slow-down shows in the CI log.
test: install-dev
	$(COMPILE)
	$(PY) -m pytest -q -n auto --dist worksteal --durations=15

# Benchmarks at the sizes the issues name (slow: the 100,000-agent engine run alone takes ~20 min).
bench: install-dev
	PVSST_BENCH_FULL=1 $(PY) -m pytest -q -s tests/benchmarks

clean:
	rm -rf runs .pytest_cache
