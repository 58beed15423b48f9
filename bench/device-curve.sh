#!/usr/bin/env bash
# The worker curve on a lent many-core machine, in one call (issue 10's `--workers 15 >= 6x
# --workers 0`). Runs in the repository root there, with .device-kit/ (scripts/device-kit.sh)
# and dist/ carried. Writes the compare reports and logs under $OUT (or bench/out/device).
# Sized to end in ~3-5 minutes on 16 cores; every step's log is written as it goes, so a run
# cut short still returns what it measured.
set -euo pipefail
kit=.device-kit
out=${OUT:-bench/out/device}
mkdir -p "$out"
[ -f "$kit/node.xz" ] || { echo "device-curve: no $kit/node.xz; run scripts/device-kit.sh here and carry $kit" >&2; exit 1; }

mkdir -p /tmp/chainpress-node
xz -dc "$kit/node.xz" > /tmp/chainpress-node/node
chmod +x /tmp/chainpress-node/node
export PATH=/tmp/chainpress-node:$PATH
# The kit's modules stand in for an install (the tree that travels has none).
if [ ! -e node_modules ]; then ln -s "$kit/node_modules" node_modules; fi

cores=$(nproc)
most=$((cores > 1 ? cores - 1 : 1))
counts() { printf '%s\n' "$@" | awk -v m="$most" '$1 <= m' | sort -nu | paste -sd, -; }
workers=$(counts 0 1 2 4 8 "$most")
peer=()
[ -f "$kit/peer/pi-condense-compact.mjs" ] && peer=(--peer "$kit/peer/pi-condense-compact.mjs")
{
  echo "node $(node --version) at $(command -v node); $cores cores; workers $workers"
  grep -m1 'model name' /proc/cpuinfo || true
  free -g | head -2 || true
} | tee "$out/machine.txt"

step() { # name, command...
  local name=$1; shift
  echo "== $name: $*" | tee -a "$out/steps.txt"
  local started=$SECONDS
  "$@" 2>&1 | tee "$out/$name.log"
  echo "== $name took $((SECONDS - started)) s" | tee -a "$out/steps.txt"
  cp bench/out/compare-*.json "$out/" 2>/dev/null || true # after each step: a run cut short keeps what it measured
}

step fixtures node dist/bench/fixtures/cli.js 20x1M 20x300-100M 200x1M
step compare-small node dist/bench/compare.js 20x1M 20x300-100M --iterations 3 --workers "$workers" ${peer[@]+"${peer[@]}"}
step compare-200 node dist/bench/compare.js 200x1M --iterations 1 --workers "$(counts 0 8 "$most")" ${peer[@]+"${peer[@]}"}
