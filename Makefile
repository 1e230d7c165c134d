# Two commands on a fresh Debian machine (root, Python and pip only):
#   make demo   installs what is missing, runs the exchange-quick scenario on a temp directory
#   make test   installs what is missing, runs linters and the test suite
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
# what a run needs, and what the tests add (lab filesystems, a browser for the HTML report and
# its driver, Prometheus and promtool for live metrics, Debian's Ceph for the hyper-converged lab)
# (libfuse3-3, fuse3: the fault server of `assay lab create ... --faulty`)
RUN_PACKAGES := fio util-linux procps libfuse3-3 fuse3
TEST_PACKAGES := $(RUN_PACKAGES) btrfs-progs btrfs-compsize xfsprogs chromium chromium-driver \
  openssh-server openssh-client iproute2 e2fsprogs postgresql prometheus \
  ceph-mon ceph-mgr ceph-osd ceph-common ceph-mds ceph-fuse python3-rbd python3-rados
APT_PACKAGES ?= $(RUN_PACKAGES)

.PHONY: demo test lint system venv clean

system:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV) 2>/dev/null || { \
	  echo "installing: python3-venv"; rm -rf $(VENV); \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	  python3 -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

venv: system $(VENV)/.installed

demo: venv
	$(VENV)/bin/assay run exchange-quick

lint: APT_PACKAGES = $(TEST_PACKAGES)
lint: venv
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy --strict src/assay/scenario src/assay/plan src/assay/metrics \
	  src/assay/results src/assay/runners
	$(VENV)/bin/lint-imports  # the import contracts: layers, no circle (pyproject.toml)

test: APT_PACKAGES = $(TEST_PACKAGES)
# two tiers: the suite, then the labs run end to end (the cluster of network-namespace hosts,
# the Ceph lab) and the longest single-host runs. Each on one worker: beside each other, paced
# runs miss their rate or fall behind their schedule, as they should on a shared machine (a
# Ceph lab starves a database lab's pgbench; an unpaced run on the disk slows a paced one).
# `WORKERS=2 make test` runs tier 2 on two pytest-xdist workers (a module, or all of Ceph, is
# one worker's group: tests/conftest.py), for a quicker answer on a machine with room.
WORKERS ?= 1
XDIST := $(if $(filter 1,$(WORKERS)),,-n $(WORKERS))
PYTEST := $(VENV)/bin/pytest -q -p no:cacheprovider --durations=25
STARTED := $(shell date +%s)
test: lint
	@t1=$$(date +%s); $(PYTEST) -m "not tier2"; rc=$$?; t2=$$(date +%s); \
	if [ $$rc -eq 0 ]; then $(PYTEST) $(XDIST) -m tier2; rc=$$?; fi; t3=$$(date +%s); \
	m() { printf '%dm%02ds' $$(($$1 / 60)) $$(($$1 % 60)); }; \
	echo "make test: install and lint $$(m $$((t1 - $(STARTED)))), tier 1 $$(m $$((t2 - t1)))," \
	  "tier 2 $$(m $$((t3 - t2))), in all $$(m $$((t3 - $(STARTED))))"; exit $$rc

clean:
	rm -rf $(VENV) results .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .grimp_cache
