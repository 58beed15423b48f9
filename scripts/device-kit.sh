#!/usr/bin/env bash
# Packs what bench/device-curve.sh needs on a lent machine that has no Node.js and no registry:
# this machine's node binary (xz), the production dependencies (the executable's bundles leave
# them out), and the upstream peer when ../shared has it. Into .device-kit/ (ignored), which the
# device call carries with dist/; the whole tree that travels must stay under 64 MiB.
#
#   npm run build && bash scripts/device-kit.sh
#   device run: carry [".device-kit", "dist"], command "bash bench/device-curve.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
kit=.device-kit

[ -f dist/src/bin/main.js ] || { echo "device-kit: dist/ is not built; run npm run build first" >&2; exit 1; }
rm -rf "$kit" && mkdir -p "$kit"

node_bin=$(node -p process.execPath)
# Only the C and C++ runtimes may be linked in: a node built against the system's libuv, OpenSSL or
# ICU would not start on the lent machine, whose system has other versions or none.
if ldd "$node_bin" | grep -Eq 'lib(uv|ssl|crypto|icu|node|nghttp|cares|brotli|z)\.'; then
  echo "device-kit: $node_bin links shared libraries the lent machine may lack; use an official Node build" >&2
  exit 1
fi
xz -T0 -6 -c "$node_bin" > "$kit/node.xz"
node --version > "$kit/node-version.txt"

# The production closure, as npm resolved it here (optional native parts included).
npm ls --omit=dev --parseable --all | tail -n +2 | while read -r dir; do
  rel=${dir#"$PWD"/}
  mkdir -p "$kit/$(dirname "$rel")"
  cp -R "$rel" "$kit/$rel"
done

peer=../shared/peers/pi-condense-2.9.1/pi-condense-compact.mjs
if [ -f "$peer" ]; then
  mkdir -p "$kit/peer" && cp "$peer" "$kit/peer/"
else
  echo "device-kit: no upstream peer at $peer; the device run will skip its row" >&2
fi

du -sh "$kit" dist
