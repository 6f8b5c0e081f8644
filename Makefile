# Forge: the two set-up commands are `make run` and `make test`; both work on a fresh machine
# with only Python >= 3.11 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.forge-installed

.PHONY: run test check lint format typecheck contracts bench acp-ts-check clean

RUN_STAMP := $(VENV)/.forge-run-installed
# uv installs in seconds where it is on the PATH (told pip's index, find-links and constraint
# settings, so the same versions resolve: scripts/uv_pip_options.py); else pip. USE_UV=0 forces
# pip. Both print what they are doing (docs/adr/0052).
UV := $(if $(filter 0,$(USE_UV)),,$(shell command -v uv 2>/dev/null))
# Tests run in parallel (pytest-xdist): most of them wait on subprocesses, tmux and loopback
# servers, so twice as many workers as cores. PYTEST_WORKERS=0 runs them one at a time;
# PYTEST_ARGS='-m "not slow"' leaves out the slow ones while iterating.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) * 2 )))

# $(1): what to install ('.' or '.[dev]'); $(2): the stamp to touch.
define install
	@echo "forge: installing Forge and its dependencies into $(VENV)$(if $(UV), with uv,) (once)..."
	@test -x $(BIN)/python || $(if $(UV),$(UV) venv --quiet --seed --python $(PYTHON) $(VENV),$(PYTHON) -m venv $(VENV))
	$(if $(UV),@$(UV) pip install --python $(BIN)/python $$($(PYTHON) scripts/uv_pip_options.py) -e '$(1)',@set -o pipefail; $(BIN)/python -m pip install --progress-bar off -e '$(1)' | { grep -E '^(Collecting|Successfully installed)' || true; })
	@touch $(2)
	@echo "forge: installed."
endef

SHELL := /bin/bash

$(STAMP): pyproject.toml
	$(call install,.[dev],$(STAMP))
	@touch $(RUN_STAMP)

# `make run` needs Forge alone: the dev tools (mypy, ruff, pytest...) come with `make test`.
$(RUN_STAMP): pyproject.toml
	$(call install,.,$(RUN_STAMP))

run: $(RUN_STAMP)
	$(BIN)/forge $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check forge tests bench scripts
	$(BIN)/ruff format --check forge tests bench scripts

format: $(STAMP)
	$(BIN)/ruff format forge tests bench scripts
	$(BIN)/ruff check --fix forge tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy

contracts: $(STAMP)
	$(BIN)/lint-imports

check: lint typecheck contracts test

# The TUI section needs tmux (a real terminal): install it like .ci/run does, or say so.
bench: $(STAMP)
	@command -v tmux >/dev/null 2>&1 || { echo "bench: installing tmux (the TUI section needs it)"; \
	  (apt-get update -qq && apt-get install -y -qq tmux) || true; }
	@command -v tmux >/dev/null 2>&1 || { echo "bench: tmux is required (apt-get install tmux)" >&2; exit 1; }
	$(BIN)/python -m bench $(ARGS)

# forge acp under the official TypeScript ACP SDK (needs node >= 20, npm and npm's registry; not
# part of `make test`): scripts/acp_ts_check/.
acp-ts-check: $(STAMP)
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || \
	  { echo "acp-ts-check: node (>= 20) and npm are required" >&2; exit 1; }
	$(BIN)/python scripts/acp_ts_check/run_check.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
