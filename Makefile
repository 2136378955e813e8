# gpuvalue: `make run` builds everything from the bundled snapshot, `make test` checks it.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# uv is installed with pip when missing; `python3 -m uv` works wherever pip put it.
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")
RUN := $(UV) run --frozen
DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export UV_LINK_MODE ?= copy
PORT ?= 8000

.PHONY: help env run test test-nights lint format dev serve query docs bench bench-history postgres postgres-stop prod prod-stop prod-status clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

.venv/.synced: pyproject.toml uv.lock
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	$(UV) sync --frozen
	@touch $@

env: .venv/.synced  ## create the environment (uv sync from uv.lock)

run: env  ## run the whole pipeline on the bundled snapshot, offline, and build the site (LIVE=1: fetch today's prices)
	$(RUN) python -m pipeline.run $(if $(LIVE),--live,)

# Python keeps its bytecode for the test run even where the environment turns that off
# (PYTHONDONTWRITEBYTECODE=1): the suite starts ~40 Python processes (two workers, the
# Dagster CLI, webservers, daemons, code servers, run processes, CLI examples), and
# without .pyc files each compiles Dagster and the project again (~2.5 s of CPU apiece)
# and pytest rewrites every test module's asserts again in each worker (docs/performance.md).
test: export PYTHONDONTWRITEBYTECODE =
test: env  ## ruff, import contracts and pytest but the night tier (deprecation warnings are errors)
	$(RUN) ruff check --no-cache .
	$(RUN) ruff format --no-cache --check .
	$(RUN) lint-imports --no-cache
	$(RUN) pytest -m "not night" --chart-cache=.build/test-chart-cache

test-nights: export PYTHONDONTWRITEBYTECODE =
test-nights: env  ## the night tier: tests that run whole nights of their own (CI runs it after make test)
	$(RUN) pytest -m night --chart-cache=.build/test-chart-cache

lint: env  ## ruff lint and format check, import contracts (docs/architecture.md)
	$(RUN) ruff check --no-cache .
	$(RUN) ruff format --no-cache --check .
	$(RUN) lint-imports --no-cache

format: env  ## apply ruff's fixes and formatting
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

dev: env  ## Dagster UI with the nightly schedule, on 127.0.0.1:3000 (DEV_PORT=...: another port)
	@mkdir -p $(DAGSTER_HOME) && cp dagster.yaml $(DAGSTER_HOME)/dagster.yaml
	DAGSTER_HOME=$(DAGSTER_HOME) exec $(RUN) dg dev --host 127.0.0.1 --port $(or $(DEV_PORT),3000)

# The production profile (docs/deployment.md): Dagster's storage in a project-local
# PostgreSQL cluster, the webserver and the daemon in the background, schedules on.
PG_DIR ?= $(CURDIR)/.prod/postgres
PG_PORT ?= 5433
PROD_HOME ?= $(CURDIR)/.prod/dagster_home
PROD_PORT ?= 3000

postgres: env  ## start a project-local PostgreSQL for Dagster's storage (PG_DIR, PG_PORT=5433)
	$(RUN) python -m deploy.postgres start --dir $(PG_DIR) --port $(PG_PORT)

postgres-stop: env  ## stop that PostgreSQL
	$(RUN) python -m deploy.postgres stop --dir $(PG_DIR) --port $(PG_PORT)

prod: postgres  ## production profile: webserver (PROD_PORT=3000) + daemon on PostgreSQL, nightly schedules on (LIVE=1: live prices)
	$(if $(LIVE),GPUVALUE_LIVE=1) $(if $(EXECUTOR),GPUVALUE_EXECUTOR=$(EXECUTOR)) \
	  $(RUN) python -m deploy.prod start --home $(PROD_HOME) --port $(PROD_PORT) --pg-dir $(PG_DIR)

prod-status: env  ## are the production webserver and daemon running
	@$(RUN) python -m deploy.prod status --home $(PROD_HOME)

prod-stop: env  ## stop the production webserver and daemon (PostgreSQL keeps running)
	$(RUN) python -m deploy.prod stop --home $(PROD_HOME)

serve:  ## serve site/ on http://127.0.0.1:$(PORT)
	@test -f site/index.html || { echo "no site yet: run 'make run' first"; exit 2; }
	python3 -m http.server $(PORT) --bind 127.0.0.1 --directory site

query: env  ## read-only SQL against the published warehouse: make query SQL="SELECT ..."
	@test -n "$$SQL" || { echo 'usage: make query SQL="SELECT * FROM gpus LIMIT 5"'; exit 2; }
	@$(RUN) python -m warehouse.query "$$SQL"

docs: env  ## refresh the generated validation figures in docs/methodology.md (after make run)
	@test -f "$${GPUVALUE_PUBLISHED_DIR:-warehouse/published}/gpuvalue.duckdb" || { echo "no published warehouse yet: run 'make run' first"; exit 2; }
	$(RUN) python -m reports.methodology --update-docs

bench: env  ## print timing figures of the pipeline's stages
	$(RUN) python bench/pipeline_bench.py

YEARS ?= 1
bench-history: env  ## time one nightly partition over YEARS (default 1) of synthetic history
	$(RUN) python bench/history_bench.py --years $(YEARS) $(ARGS)

clean:  ## remove generated outputs (not the environment)
	rm -rf .build site warehouse/published warehouse/releases warehouse/gpuvalue.duckdb warehouse/gpuvalue.duckdb.wal
