#!/usr/bin/env bash
# `make pgo`: writes the simulator's profile for profile-guided optimisation
# (crates/ssdsim/pgo.profdata, read by tools/rustflags.sh). An instrumented build runs the
# jobs users wait for: a review of a DRAM TLC drive (every test and an application trace),
# the fingerprint `ssdlab fit` runs as each trial (on a DRAM-less HMB drive), a QLC drive's
# consistency, a SATA drive's working set, a fio job; their counts, merged sparse (a
# function they never ran keeps no profile, so it is compiled as without one, not as cold).
# Run it again after changing the simulator's hot path: functions whose code changed since
# lose their profile (the rest keep it), so a stale profile costs speed, never correctness.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$HOME/.cargo/bin:$PATH
rustup component add llvm-tools >/dev/null 2>&1 || true
profdata=$(find "$(rustc --print sysroot)" -name llvm-profdata -type f | head -n1)
[[ -x $profdata ]] || { echo "pgo: llvm-profdata not found (rustup component add llvm-tools)" >&2; exit 2; }
work=target/pgo-gen
rm -rf "$work/data" "$work/python" "$work/run"
mkdir -p "$work/data" "$work/python" "$work/run"
RUSTFLAGS="-Cprofile-generate=$PWD/$work/data" cargo build --release --quiet -p ssdsim-py \
  --target-dir "$work/cargo"
rm -rf "$work/data"/*  # the build scripts' own counts
cp -r python/ssdlab "$work/python/"
find "$work/python" -name __pycache__ -prune -exec rm -rf {} +
cp "$work/cargo/release/lib_sim.so" "$work/python/ssdlab/_sim.abi3.so"
run() { PYTHONPATH=$PWD/$work/python .venv/bin/python -m ssdlab.cli "$@" --db "$work/run/r.sqlite" >/dev/null; }
run review --drive sim:tlc-256 -o "$work/run/review"
run run fingerprint --drive sim:sn520-128
run run consistency --drive sim:qlc-pcie4-hmb-1000 --seconds 300
run run working-set --drive sim:m4-256
run run fio python/ssdlab/calibration/jobs/pm981a-raw-qd1.fio --drive sim:pm981a-256
"$profdata" merge --sparse -o crates/ssdsim/pgo.profdata "$work/data"
"$profdata" show crates/ssdsim/pgo.profdata | grep -E '^(Total functions|Total count)'
