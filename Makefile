# Forge: the two set-up commands are `make run` and `make test`; both work on a fresh machine
# with only Python >= 3.11 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.forge-installed

.PHONY: run test check lint format typecheck contracts bench acp-ts-check clean

$(STAMP): pyproject.toml
	@echo "forge: installing Forge and its dependencies into $(VENV) (about a minute the first time)..."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)
	@echo "forge: installed."

run: $(STAMP)
	$(BIN)/forge $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

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
