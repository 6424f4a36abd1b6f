# Each target creates .venv if missing, installs the project into it, then runs.
# `make up` installs what running needs (the `all` extra: the service, the dashboard and the team
# backends; pyproject.toml); `make test` adds the test tools (the `dev` extra).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

.PHONY: up up-team test test-lowest lint bench bench-scale bench-dashboard clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# PYTHONWARNINGS: setuptools' notice on editable installs speaks to its developers, not to someone starting Dailies.
$(RUN_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet --upgrade pip
	PYTHONWARNINGS=ignore $(BIN)/pip install --quiet -e '.[all]'
	touch $(RUN_STAMP)

$(TEST_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet --upgrade pip
	PYTHONWARNINGS=ignore $(BIN)/pip install --quiet -e '.[dev,all]'
	touch $(TEST_STAMP) $(RUN_STAMP)

up: $(RUN_STAMP)
	$(BIN)/dailies up

# The same, with a dashboard that asks each visitor for a key: share links open for guests here.
up-team: $(RUN_STAMP)
	$(BIN)/dailies up --team

# The type check ([tool.mypy] in pyproject.toml) runs in both, so CI (`make test`) runs it too.
test: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(TEST_STAMP)
	$(BIN)/python bench/render.py
	$(BIN)/python bench/service.py
	$(BIN)/python bench/image_check.py

# Starts its own PostgreSQL and SeaweedFS (see bench/README.md); a few minutes on 2 cores.
bench-scale: $(TEST_STAMP)
	$(BIN)/python bench/scale.py

# Drives Debian's chromium over the dashboard's pages and interactions (see bench/README.md).
bench-dashboard: $(TEST_STAMP)
	$(BIN)/python bench/dashboard.py

# The team stack of compose.yaml built and tried end to end (deploy/test_deploy.py): a Docker engine
# (started here as root when none runs), a debootstrapped base image, the images, the stack with three
# workers, a task and its result from the bucket, the dashboard, a worker killed mid-render; torn down.
.PHONY: test-deploy build-image
test-deploy: $(TEST_STAMP)
	$(BIN)/python deploy/test_deploy.py

# The images alone (the product's checked: non-root, every command) and compose.yaml checked: what CI runs.
build-image: $(TEST_STAMP)
	$(BIN)/python deploy/test_deploy.py --build-only

# The same code on the oldest versions pyproject.toml allows: every runtime and team dependency
# pinned to its lower bound (constraints/lowest.txt), in a venv of its own; the test tools resolve
# to whatever fits. The tests that exercise the runtime code without the browser.
LOWEST := .venv-lowest
LOWEST_STAMP := $(LOWEST)/.installed-lowest

$(LOWEST)/bin/python:
	$(PYTHON) -m venv $(LOWEST)

$(LOWEST_STAMP): $(LOWEST)/bin/python pyproject.toml constraints/lowest.txt constraints/lowest-dev.txt
	$(LOWEST)/bin/pip install --quiet --upgrade pip
	$(LOWEST)/bin/pip install --quiet -e '.[dev,all]' -c constraints/lowest.txt -c constraints/lowest-dev.txt
	touch $(LOWEST_STAMP)

test-lowest: $(LOWEST_STAMP)
	env -u CI $(LOWEST)/bin/python -m pytest tests/spec tests/client tests/service tests/dashboard tests/generator \
		tests/cli -q -p no:cacheprovider -x

clean:
	rm -rf $(VENV)
