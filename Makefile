# asyncbench: `make run` installs and runs the default suite; `make test` installs and runs the tests.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
# Installed only when no torch is present: GPU users keep the CUDA build they brought.
TORCH_SPEC ?= torch==2.13.0
# MXNet 1.9.1 needs numpy < 1.24 (numpy 1.24 removed np.bool, which `import mxnet` uses), which
# JAX and the rest cannot share: it gets an environment of its own, whose Python runs its cases.
MXNET_VENV ?= .venv-mxnet
MXNET_SPEC ?= mxnet==1.9.1 "numpy<1.24"
# what asyncbench itself needs there (pyproject.toml's dependencies, less numpy: MXNet's own pin above)
MXNET_WORKER_DEPS ?= scipy psutil PyYAML click rich
# lint's second mypy reads the newest torch's annotations from an environment of its own (`torch-newest`, below)
TORCH_NEWEST_VENV ?= .venv-torch-newest
TORCH_NEWEST_SPEC ?= torch

.PHONY: chromium history postgres slurm install install-all install-run install-test install-lint lint torch-newest mypy-newest-torch golden run quick test test-fast gpu-test gpu-check bench clean mxnet mxnet-deps wheel-check

# Each install into the environment $(PYTHON) runs in is made once, until pyproject.toml (the package's
# dependencies and extras) changes or the environment's asyncbench is another tree's: a stamp per install, in that
# environment's own folder, so it goes with the environment (a stamp in this tree would outlive a venv made again at
# the same path, as .ci/run's is), or, where that folder is not writable (a system Python), in this tree under a
# folder named for the environment. pip's `install -e` of what is already installed still builds the editable wheel
# (5-12 s here), and .ci/run's steps ran twelve of them.
STAMPS := $(shell $(PYTHON) -c 'import hashlib, os, sys; print(os.path.join(sys.prefix, ".asyncbench-make") if os.access(sys.prefix, os.W_OK) else os.path.join(".asyncbench-make", hashlib.sha1(sys.prefix.encode()).hexdigest()[:12]))')
ifeq ($(STAMPS),)
$(error $(PYTHON) did not run: set PYTHON to the Python whose environment the project installs into)
endif
# "here" where the environment's asyncbench (found without this folder on the path: -I) is this tree's
INSTALLED_FROM := $(shell $(PYTHON) -I -c 'import importlib.util, os; spec = importlib.util.find_spec("asyncbench"); print("here" if spec and spec.origin and os.path.dirname(os.path.dirname(spec.origin)) == os.getcwd() else "elsewhere")' 2>/dev/null)
.PHONY: reinstall
reinstall:

# torch is an extra of the package (the core runs numpy without it); here it is installed, as TORCH_SPEC, only when
# no torch is importable: a build you brought is kept.
install: $(STAMPS)/install
$(STAMPS)/install: pyproject.toml $(if $(filter here,$(INSTALLED_FROM)),,reinstall)
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PIP) install --quiet "$(TORCH_SPEC)"
	$(PIP) install --quiet -e .
	@mkdir -p $(@D) && touch $@

# JAX too, for `make run`: asynchronous on any CPU, so the first run shows what the tool is for without a GPU.
install-run: $(STAMPS)/run
$(STAMPS)/run: $(STAMPS)/install
	$(PIP) install --quiet -e ".[jax]"
	@touch $@

install-test: $(STAMPS)/test
$(STAMPS)/test: $(STAMPS)/history
	$(PIP) install --quiet -e ".[test,jax]"
	@touch $@

# What --record, history and report need: the history extra (the store's libraries and plotly). The change points
# need nothing more: Apache Otava's analysis ships inside asyncbench (asyncbench/history/edivisive says why).
history: $(STAMPS)/history
$(STAMPS)/history: $(STAMPS)/install
	$(PIP) install --quiet -e ".[history]"
	@touch $@

# A PostgreSQL server on localhost for the store's tests (Debian's package: installed when missing, started, a role
# and a database `asyncbench`); the tests find it through ASYNCBENCH_TEST_POSTGRES.
POSTGRES_URL ?= postgresql://asyncbench:asyncbench@localhost:5432/asyncbench
postgres:
	bash tests/support/start_postgres.sh

# Debian's Chromium for the HTML report's browser tests (driven by Playwright, which the test extra installs).
chromium:
	@bash tests/support/debian_packages.sh install chromium

# A single-node Slurm on localhost for the cluster tests (Debian's slurm-wlm, slurmdbd and munge, MariaDB behind
# slurmdbd): installed when missing and configured here; the tests' fixture starts the daemons and stops them.
slurm:
	bash tests/support/slurm.sh install

# Every extra CI's steps need (lint, docs, history, test, jax), and TORCH_SPEC where no torch is, in one pip
# run: one resolve and one build of the editable wheel, where the steps' own installs (install, lint, docs, history,
# test) made five, each building it again. Their stamps are then made: `make lint`, `docs` and `test` install nothing.
install-all:
	$(PIP) install --quiet -e ".[lint,docs,history,test,jax]" $$($(PYTHON) -c "import torch" 2>/dev/null || echo "$(TORCH_SPEC)")
	@mkdir -p $(STAMPS) && touch $(STAMPS)/install && touch $(STAMPS)/lint $(STAMPS)/docs $(STAMPS)/history $(STAMPS)/test

# After `install`, so that mypy type-checks against the pinned torch (an extra: `install` puts TORCH_SPEC in place).
install-lint: $(STAMPS)/lint
$(STAMPS)/lint: $(STAMPS)/install
	$(PIP) install --quiet -e ".[lint]"
	@touch $@

# ruff (lint and format check), mypy (strict on results/ and verdicts/) on the pinned torch and on the newest
# release, and the layer contracts (import-linter; the order is written in pyproject.toml and docs/architecture.md).
# The same hooks run from .pre-commit-config.yaml.
# The two mypy runs (pinned torch, newest torch) are independent and single-threaded: they run side by side, each
# with a cache of its own, and the recipe fails when either fails (23 s saved of CI's 20 minutes on 2 cores).
lint: install-lint $(TORCH_NEWEST_VENV)/.installed
	ruff check .
	ruff format --check .
	mypy --cache-dir .mypy_cache/pinned & pinned=$$!; \
	mypy --cache-dir .mypy_cache/newest --python-executable $(TORCH_NEWEST_VENV)/bin/python; newest=$$?; \
	wait $$pinned && test $$newest -eq 0
	lint-imports

# torch's annotations change between releases (2.14 typed `new_group` as `ProcessGroup | Literal[-100] | None`),
# and users bring their own: the code is type-checked on the newest torch the registry serves too. Its wheel alone
# (no CUDA libraries: mypy reads annotations, it imports nothing) goes into an environment of its own, which sees
# this environment's packages behind its own through a .pth file. PIP_CONSTRAINT is emptied for this one install:
# a machine-wide cap on torch (as some CI images set) must not hide the newest release.
# Made once (`lint` needs it: its stamp); `make torch-newest` makes it again with whatever release is newest now.
# It needs only this environment's pip, not the package: .ci/run makes it while the package installs.
torch-newest:
	rm -f $(TORCH_NEWEST_VENV)/.installed
	$(MAKE) $(TORCH_NEWEST_VENV)/.installed

$(TORCH_NEWEST_VENV)/.installed:
	rm -rf $(TORCH_NEWEST_VENV)
	$(PYTHON) -m venv --without-pip $(TORCH_NEWEST_VENV)
	PIP_CONSTRAINT=/dev/null $(PIP) install --quiet --no-deps --no-compile --target "$$($(TORCH_NEWEST_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" "$(TORCH_NEWEST_SPEC)"
	$(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$$($(TORCH_NEWEST_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/zz-asyncbench-lint.pth"
	@$(TORCH_NEWEST_VENV)/bin/python -c 'import importlib.metadata as m; print("mypy on torch", m.version("torch"))'
	touch $@

# mypy on the newest torch alone
mypy-newest-torch: install-lint $(TORCH_NEWEST_VENV)/.installed
	mypy --cache-dir .mypy_cache/newest --python-executable $(TORCH_NEWEST_VENV)/bin/python

# The documentation site into site/ (git-ignored). --strict: a link to a page or an anchor that does not exist fails.
# After `install`: the command-line reference (docs/reference/cli.md) imports asyncbench's click commands.
.PHONY: docs
docs: $(STAMPS)/docs
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --quiet

$(STAMPS)/docs: $(STAMPS)/install
	$(PIP) install --quiet -e ".[docs]"
	@touch $@

# After an intended change of what the writers print: rewrite tests/report/golden/ and read the diff.
golden: install-test
	ASYNCBENCH_UPDATE_GOLDEN=1 $(PYTHON) -m pytest -q tests/report/test_golden.py

# `make mxnet`: the environment MXNet's cases run in; kept between runs, rebuilt when pyproject.toml (which holds
# the package's dependencies) changes.
# Its third-party packages first (`mxnet-deps`: nothing of this tree, so .ci/run makes it while lint runs), then
# this package, editable (a build in this tree: after the other environment's).
mxnet: $(MXNET_VENV)/.installed

mxnet-deps: $(MXNET_VENV)/.deps

$(MXNET_VENV)/.deps:
	$(PYTHON) -m venv $(MXNET_VENV)
	$(MXNET_VENV)/bin/pip install --quiet $(MXNET_SPEC) $(MXNET_WORKER_DEPS)
	touch $@

$(MXNET_VENV)/.installed: pyproject.toml $(MXNET_VENV)/.deps
	$(MXNET_VENV)/bin/pip install --quiet --no-deps -e .
	$(MXNET_VENV)/bin/python -c "import mxnet"
	touch $@

run: install-run
	$(PYTHON) -m asyncbench run

quick: install-run
	$(PYTHON) -m asyncbench run --quick

# The jax-, mxnet-, postgres-, browser- and slurm-marked tests must run here, not skip: ASYNCBENCH_REQUIRE turns their skip into a failure.
# On TEST_WORKERS processes (pytest-xdist), a file's tests together (`--dist loadfile`: its module-scoped fixtures,
# such as an ab run several tests read, are then made once; under `--dist loadgroup` with a group per file they were
# made again on the other process, test_history_store's twelve planted runs twice, 90 s of CPU against 43): two,
# CI's core count. Then the `alone` tests, one at a time: each asserts an overlap or a
# speed-up that a second core running another test takes away (MXNet's pipelining gain fell from 1.3x to 1.10x
# beside another test), and the one Slurm test that stops the controller the others share (tests/conftest.py says why).
TEST_WORKERS ?= 2
# The files that hold `alone` tests: that phase collects only them (7 of the suite's files; collecting all 4000
# tests to deselect the rest cost 10 s of CPU). tests/conftest.py fails a run whose `alone` test lies elsewhere.
ALONE_FILES = $(shell grep -rlE --include='*.py' 'mark\.alone' tests)
TEST_ENV = ASYNCBENCH_REQUIRE=jax,mxnet,postgres,browser,slurm ASYNCBENCH_TEST_POSTGRES=$(POSTGRES_URL)
test: install-test mxnet postgres chromium slurm
	$(TEST_ENV) $(PYTHON) -m pytest -m "not alone" -n $(TEST_WORKERS) --dist loadfile --durations=25
	$(TEST_ENV) $(PYTHON) -m pytest -m alone --durations=10 $(ALONE_FILES)

# The suite without a server or a second environment: no PostgreSQL, Chromium, Slurm or MXNet set up first (their
# tests skip), the end-to-end CLI tests (tests/e2e/) left out. A minute or two for an edit's first check; `make test`
# is what CI runs.
test-fast: install-test
	$(PYTHON) -m pytest -q -m "not postgres and not browser and not slurm and not mxnet and not slow" --ignore=tests/e2e

gpu-test: install-test
	$(PYTHON) -m pytest -m gpu

# On a CUDA machine: the gpu and streams tests, the suite and every config on torch and cupy, and the
# fidelity cross-checks, written to results/<gpu-name>/. Without CUDA: one line, exit 0, nothing run.
gpu-check: install-test
	$(PYTHON) benchmarks/gpu_check.py

bench: install history
	$(PYTHON) benchmarks/overhead.py
	$(PYTHON) benchmarks/fidelity.py
	$(PYTHON) benchmarks/startup.py
	$(PYTHON) benchmarks/ci_coverage.py
	$(PYTHON) benchmarks/gate_stability.py
	$(PYTHON) benchmarks/isolation_cost.py
	$(PYTHON) benchmarks/sweep_scale.py
	$(PYTHON) benchmarks/interval_validity.py
	$(PYTHON) benchmarks/ab_gate.py
	$(PYTHON) benchmarks/history_changes.py
	$(PYTHON) benchmarks/defaults_fit.py
	$(PYTHON) benchmarks/fidelity_backends.py
	$(PYTHON) benchmarks/thread_pools.py

# The wheel on its own, as a user gets it (not run by CI: it downloads the dependencies, a minute or so): built
# from this tree, installed with the history extra and no torch into a brand-new environment outside the checkout,
# which then runs a packaged suite by name on numpy, records it, and lists the suites.
WHEEL_CHECK_DIR ?= /tmp/asyncbench-wheel-check
wheel-check:
	rm -rf $(WHEEL_CHECK_DIR)
	$(PIP) wheel --quiet --no-deps -w $(WHEEL_CHECK_DIR)/dist .
	$(PYTHON) -m venv $(WHEEL_CHECK_DIR)/venv
	$(WHEEL_CHECK_DIR)/venv/bin/pip install --quiet "$$(ls $(WHEEL_CHECK_DIR)/dist/asyncbench-*.whl)[history]"
	@! $(WHEEL_CHECK_DIR)/venv/bin/python -c "import torch" 2>/dev/null || (echo "wheel-check: torch was installed" && false)
	cd $(WHEEL_CHECK_DIR) && venv/bin/asyncbench run async-computation -b numpy --quick --no-progress -o r.json \
		--record --history history.sqlite
	cd $(WHEEL_CHECK_DIR) && venv/bin/asyncbench list | grep -A3 '^suites'
	cd $(WHEEL_CHECK_DIR) && venv/bin/pip check
	@# a user's typed steps: py.typed and @step's overloads let `mypy --strict` read them without a complaint
	$(WHEEL_CHECK_DIR)/venv/bin/pip install --quiet mypy
	printf 'from typing import Any, Callable\n\nimport asyncbench\n\n\n@asyncbench.step(sync_every=(0, 1))\ndef work(backend: Any, device: str, params: dict[str, Any]) -> Callable[[], None]:\n    return lambda: None\n' > $(WHEEL_CHECK_DIR)/steps.py
	cd $(WHEEL_CHECK_DIR) && venv/bin/mypy --strict steps.py

clean:
	rm -rf build dist *.egg-info .pytest_cache $(MXNET_VENV) $(TORCH_NEWEST_VENV) .ci-venv $(STAMPS) .asyncbench-make
