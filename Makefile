# asyncbench: `make run` installs and runs the default suite; `make test` installs and runs the tests.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
# Installed only when no torch is present: GPU users keep the CUDA build they brought.
TORCH_SPEC ?= torch==2.13.0

.PHONY: install install-test run quick test gpu-test bench clean

install:
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PIP) install --quiet "$(TORCH_SPEC)"
	$(PIP) install --quiet -e .

install-test: install
	$(PIP) install --quiet -e ".[test]"

run: install
	asyncbench run

quick: install
	asyncbench run --quick

test: install-test
	$(PYTHON) -m pytest

gpu-test: install-test
	$(PYTHON) -m pytest -m gpu

bench: install
	$(PYTHON) benchmarks/overhead.py
	$(PYTHON) benchmarks/fidelity.py
	$(PYTHON) benchmarks/startup.py
	$(PYTHON) benchmarks/ci_coverage.py
	$(PYTHON) benchmarks/gate_stability.py
	$(PYTHON) benchmarks/isolation_cost.py

clean:
	rm -rf build dist *.egg-info .pytest_cache
