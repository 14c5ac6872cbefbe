# ssdlab: every target installs what it needs (uv, the Python env, the Rust build).
SHELL := /bin/bash
UV_VERSION := 0.13.9
export PATH := $(HOME)/.local/bin:$(HOME)/.cargo/bin:$(PATH)
UV := $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)
PY := .venv/bin/python
STAMP := .venv/.ssdlab-built
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml
PGO_PROFILE := crates/ssdsim/pgo.profdata
DEMO_OUT ?= reports/demo

.PHONY: all env build pgo demo test test-rust test-py test-parallel test-serial bench lint lint-py clean sysdeps sysdeps-demo

all: build

$(UV):
	python3 -m pip install --quiet --user "uv==$(UV_VERSION)" || python3 -m pip install --quiet --break-system-packages --user "uv==$(UV_VERSION)"

.venv/.synced: pyproject.toml uv.lock | $(UV)
	# extras: ray (--ray), pyarrow (Parquet export); bytecode compiled once here, as Python
	# does not write it where PYTHONDONTWRITEBYTECODE is set (each command would compile
	# plotly, matplotlib... again: seconds per start)
	$(UV) sync --frozen --all-groups --all-extras --compile-bytecode
	touch $@

env: .venv/.synced

# maturin develop: builds the Rust extension in release mode into python/ssdlab and
# installs the package (editable) with its `ssdlab` command into .venv.
# (cargo with every core, not a parallel make's jobserver: `make test` compiles while apt installs)
# Both with the simulator's profile-guided optimisation (tools/rustflags.sh; `make pgo`).
$(STAMP): .venv/.synced $(RUST_SRC) $(wildcard $(PGO_PROFILE))
	RUSTFLAGS="$$(tools/rustflags.sh)" MAKEFLAGS= VIRTUAL_ENV=$(CURDIR)/.venv .venv/bin/maturin develop --release --uv --quiet
	$(PY) -m compileall -q python/ssdlab
	RUSTFLAGS="$$(tools/rustflags.sh)" MAKEFLAGS= cargo build --release --quiet -p ssdsim-nbd  # the nbdkit plugin of `ssdlab serve`
	touch $@

build: $(STAMP)

# the simulator's profile for profile-guided optimisation, from an instrumented build
# running the jobs users wait for (about a minute); commit it with the hot path it measured
pgo: build
	tools/pgo.sh
	$(MAKE) --no-print-directory build

# distribution packages (apt-get as root; otherwise the one command to run, and stop)
sysdeps:
	tools/sysdeps.sh test

sysdeps-demo:
	tools/sysdeps.sh demo

demo: sysdeps-demo build
	.venv/bin/ssdlab review --drive sim:tlc-256 -o $(DEMO_OUT)

# the distribution packages install (apt waits on downloads and the disk) while the
# extension compiles; the linters, the Rust tests' compile, pytest's rewrite of the test
# modules and the serial tests overlap (mypy is one thread; cargo's last crate and links
# leave a core idle; the serial tests mostly wait on real time: 36 s alone, 15 s of CPU;
# on 2 cores this step took 66 s against 54 + 37 s one after the other, three runs, the
# serial tests passing in each); the parallel tests then have both cores
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target sysdeps build
	$(MAKE) --no-print-directory -j3 --output-sync=target lint-py test-rust $(REWRITTEN) test-serial
	$(MAKE) --no-print-directory test-parallel

test-rust:
	MAKEFLAGS= cargo test --profile test-opt -p ssdsim --features verify  # its own jobs, not the parallel make's jobserver

# three workers more than the cores: the NVMe VM's boot, fio's start-ups and the real-time
# waits leave workers idle (on 2 cores, 2026-12-07, one run after another: 503 s with five
# workers against 534 s and 544 s with four and 516 s with six; on an earlier suite four
# against three: 463 s and 446 s against 525 s and 580 s); tests that share a resource run
# in one xdist_group
WORKERS := $(shell echo $$(( $$(nproc) + 3 )))
# the serial tests from the files that mark them (tests/conftest.py refuses a serial test
# whose file does not say so): collecting the whole suite again took 3.5 s
SERIAL_FILES = $(shell grep -rl --include='*.py' 'mark\.serial' tests | grep -v '^tests/conftest.py$$')
# pytest rewrites each test module's asserts as it imports it and keeps the result in
# __pycache__, but not where PYTHONDONTWRITEBYTECODE is set: there every xdist worker rewrote
# the whole suite as it collected it (5 s of CPU each; four workers' start 32 s against 8-11 s
# on 2 loaded cores). Written once here (`make test` beside the linters), read by every run.
REWRITTEN := .venv/.tests-rewritten
$(REWRITTEN): $(STAMP) pyproject.toml $(shell find tests -name '*.py')
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q --collect-only -p no:cacheprovider >/dev/null || true  # a collection error: the run's to report
	touch $@

test-py: test-parallel test-serial

test-parallel: sysdeps build $(REWRITTEN)
	SSDLAB_NO_SKIPS=1 $(PY) -m pytest -q -rs -n $(WORKERS) --dist loadgroup --durations=15 -m "not slow and not serial"

test-serial: sysdeps build
	SSDLAB_NO_SKIPS=1 $(PY) -m pytest -q -rs -m "serial and not slow" $(SERIAL_FILES)

# BASE: the git ref of the build the jobs are paired against (built once into target/bench-base)
BASE ?= HEAD~1
bench: sysdeps build
	$(PY) benchmarks/jobs.py --base $(BASE)  # the jobs users wait for, each paired A/B against BASE
	cargo bench -p ssdsim-bench --bench steady_state
	$(PY) benchmarks/sim_speed.py
	$(PY) benchmarks/trace_replay.py  # replay I/Os per second (target >= 1 M for 4 KiB random)
	$(PY) benchmarks/fio_job_speed.py  # run fio: simulated I/Os per wall second (target >= 1 M), fsx.fio under 60 s
	$(PY) benchmarks/parallel.py  # sweep, review, validate: parallel vs sequential
	$(PY) -m pytest -q -m slow tests/calibration/test_validate.py  # every published figure (ssdlab validate)
	$(PY) benchmarks/fio_parity.py  # ssdlab's fio path vs plain fio, loop device over /dev/shm (root)
	$(PY) benchmarks/serve_speed.py  # ssdlab serve: served IOPS at QD1/QD16 and the lag
	$(PY) benchmarks/nvme_served_fill.py  # a served drive as an NVMe namespace in a VM: fill vs virtual time
	$(PY) benchmarks/pts_suite.py  # ssdlab pts --drive sim:tlc-256: the whole PTS client suite to steady state (target < 10 min)
	$(PY) benchmarks/fit_spare.py  # the trimmed stretch moves with spare area, not with program time or GC pace
	$(PY) benchmarks/fit_speed.py  # ssdlab fit of a 256 GB drive from its fingerprint (target <= 10 min on 2 cores); --ray writes the same twin
	$(PY) benchmarks/fit_served.py  # a twin fitted to a fingerprint run through fio on a served drive (NBD), against one fitted in virtual time
	$(PY) benchmarks/fit_closed_loop.py  # twins of three hidden drives (HMB NVMe, SATA MLC, QLC) predict tests outside the fingerprint within 10 %
	$(PY) benchmarks/fit_refit.py  # five built-in drives refitted from their figures files alone vs their hand-fitted profiles (validate)

# Python: ruff, mypy (strict on the contract), the compiled module against its stub (stubtest
# finds python/ssdlab/_sim.pyi only through the config's mypy_path; without it, any stub passed)
lint-py: build
	.venv/bin/ruff check python tests benchmarks tools
	.venv/bin/mypy
	.venv/bin/python -m mypy.stubtest ssdlab._sim --mypy-config-file pyproject.toml

lint: lint-py
	cargo clippy --workspace --release --all-targets -- -D warnings  # the tests and benches too

clean:
	rm -rf target .venv python/ssdlab/_sim*.so
