# Two entry points for a fresh machine: `make demo` and `make test`. Both install what they need first.
VENV ?= .venv
BIN := $(VENV)/bin
MODEL_SIZE ?= 1.5b
PYTEST_ARGS ?=

.PHONY: setup model test test-fast lint typecheck demo clean-sandboxes

setup:
	bash scripts/setup.sh

model: setup
	$(BIN)/autoenv model install --size $(MODEL_SIZE)

# The whole suite, Docker and the real embedded 0.5B model included.
test: setup
	$(BIN)/autoenv model install --size 0.5b
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/pytest $(PYTEST_ARGS)

# Only the tests that need neither Docker nor the model.
test-fast:
	$(BIN)/pytest -m "not docker and not embedded_model and not slow" $(PYTEST_ARGS)

lint:
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck:
	$(BIN)/mypy

# One real flywheel round on the embedded 1.5B model: solve -> propose -> validate -> calibrate -> report.
demo: model
	$(BIN)/autoenv flywheel run --config examples/flywheel/demo.toml

clean-sandboxes:
	$(BIN)/autoenv sandbox gc --all
