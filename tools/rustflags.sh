#!/usr/bin/env bash
# The RUSTFLAGS of the release build (the extension and the NBD plugin): profile-guided
# optimisation from the simulator's committed profile (crates/ssdsim/pgo.profdata, written
# by `make pgo`). The profile is copied to a path named after its content, so a new
# profile changes the flags and cargo rebuilds (cargo does not watch the file itself).
# No profile, no flags. A profile this rustc cannot read is a warning of rustc's, and the
# build goes on without it.
set -euo pipefail
cd "$(dirname "$0")/.."
prof=crates/ssdsim/pgo.profdata
[[ -f $prof ]] || exit 0
sum=$(sha256sum "$prof" | cut -c1-16)
mkdir -p target/pgo
[[ -f target/pgo/$sum.profdata ]] || cp "$prof" "target/pgo/$sum.profdata"
echo "-Cprofile-use=$PWD/target/pgo/$sum.profdata"
