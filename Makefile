# Two entry points: `make demo` and `make test` (`make docs` builds the documentation site). Both create .venv if missing and are safe to rerun.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PVSST  := $(VENV)/bin/pvsst
RUN    ?= runs/quickstart
SPEC   ?= experiments/specs/quickstart.yaml

.PHONY: demo test bench docs install install-dev clean wvs-vectors flu-study

$(PY):
	$(PYTHON) -m venv $(VENV)
	-$(PY) -m pip install -q uv

# pip installs llama-cpp-python alone (its dependencies come with the rest): it compiles from source the
# first time (~12 min) and pip's wheel cache makes every later install take seconds. uv then installs
# the rest in ~10 s (pip takes ~2.5 minutes; both resolve the same versions). Without uv (no wheel for
# this platform) or if it fails, pip does it all. LLAMA_BOUND repeats pyproject.toml's bound on
# llama-cpp-python; if they ever differ, uv builds what it needs.
LLAMA_BOUND := >=0.3.0
define install_extra
	$(PY) -m pip install -q --no-deps "llama-cpp-python$(LLAMA_BOUND)"
	if [ -x $(VENV)/bin/uv ] && $(VENV)/bin/uv pip install -q --python $(PY) -e ".[$(1)]"; then :; \
	else $(PY) -m pip install -q -e ".[$(1)]"; fi
endef

# Reinstall only when pyproject.toml changes (the stamp files make reruns cheap).
$(VENV)/.installed-local: pyproject.toml | $(PY)
	$(call install_extra,local)
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(call install_extra,dev)
	touch $@ $(VENV)/.installed-local

# Bytecode: Python writes each module's .pyc the first time a process imports it. Machines that set
# PYTHONDONTWRITEBYTECODE (as this project's do) would make every process the tests and runs start
# (process-pool and Ray workers, CLI runs) compile litellm, Ray and the rest from source again (seconds
# of CPU each; under that load a test Ray cluster lost a node), so recipes run without it. Compiling
# only what is imported costs less than compiling all of site-packages at install (~45 s on 2 cores).
unexport PYTHONDONTWRITEBYTECODE

install: $(VENV)/.installed-local
install-dev: $(VENV)/.installed-dev

demo: install
	$(PVSST) prereg freeze $(SPEC)
	$(PVSST) run $(SPEC) --out $(RUN) --workers 2
	$(PVSST) analyze $(RUN)
	$(PVSST) report $(RUN)
	@echo "Report: $(RUN)/report/report.html (figures in $(RUN)/report/figures/)"

# The census influenza-reporting design (docs/scenarios.md): the instrument's survey run is the bank the
# epidemic spec names (runs/census_flu_reporting), so the spec is frozen after it. FLU_ARGS go to the
# survey run, e.g. FLU_ARGS="--model scripted/planted_income_reporting --n 300".
FLU_ARGS ?=
flu-study: install
	$(PVSST) survey run experiments/surveys/census_flu_reporting.yaml --out runs/census_flu_reporting $(FLU_ARGS)
	$(PVSST) survey score runs/census_flu_reporting
	$(PVSST) report runs/census_flu_reporting
	$(PVSST) prereg freeze --force experiments/specs/census_flu_epidemic.yaml
	$(PVSST) run experiments/specs/census_flu_epidemic.yaml --out runs/census_flu_epidemic
	$(PVSST) report runs/census_flu_epidemic
	@echo "Reports: runs/census_flu_reporting/report/report.html, runs/census_flu_epidemic/report/report.html"

# pytest's own script, not `python -m pytest`: the repository root stays off sys.path, so the tests
# import pvsst by its installed names only (a bare `personas` left anywhere fails). Tests run on every
# core (pytest-xdist; worksteal: an idle worker takes tests queued on a busy one) and list the 15
# slowest, so a slow-down shows in the CI log.
# ruff first (line length 120, pyflakes, import order; settings in pyproject.toml): seconds, not minutes;
# --no-cache: a .ruff_cache folder would be left in the checkout.
test: install-dev
	$(VENV)/bin/ruff check --no-cache .
	$(VENV)/bin/pytest -q -n auto --dist worksteal --durations=15

# Benchmarks at the sizes the issues name (slow: the 100,000-agent engine run alone takes ~20 min).
bench: install-dev
	PVSST_BENCH_FULL=1 $(VENV)/bin/pytest -q -s tests/benchmarks

# The documentation site, built strictly (a warning fails it) into site/; open site/index.html.
docs: install-dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# The identity vectors of the shipped WVS instrument (experiments/surveys/wvs2011_values.yaml): sex and
# education of 120 WVS 2011 respondent personas drawn with another seed than the instrument's, pvsst's
# probe questions, layers 8-16 of the embedded SmolLM2-135M (~2 min on one core). Re-freeze the instrument after.
WVS_VECTORS := experiments/surveys/wvs2011_values_smollm2.npz
wvs-vectors: install
	@mkdir -p build
	$(PY) -c "from pvsst.experiments.survey.spec import load_survey; \
	from pvsst.experiments.survey.personas import human_table, persona_table; \
	s = load_survey('experiments/surveys/wvs2011_values.yaml'); \
	s = s.model_copy(update={'personas': s.personas.model_copy(update={'n': 600, 'seed': 1})}); \
	persona_table(s, human_table(s)).to_parquet('build/wvs2011_vector_personas.parquet')"
	$(PVSST) personas vectors build/wvs2011_vector_personas.parquet --attributes sex,education --layers 8-16 \
	    --n-personas 120 --questions-per-persona 2 --seed 1 --out $(WVS_VECTORS)
	$(PVSST) prereg freeze experiments/surveys/wvs2011_values.yaml --force

clean:
	rm -rf runs site .pytest_cache
