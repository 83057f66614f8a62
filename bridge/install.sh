#!/usr/bin/env bash
# Install the bridge's npm packages exactly as locked (about 560 MB, mostly minecraft-data).
# Pass --omit=dev to leave out flying-squid, which only the tests use.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "Node.js 20 is needed (node not found on PATH)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "Node.js 20 or later is needed (found $(node --version))" >&2
  exit 1
fi
npm ci --engine-strict --no-audit --no-fund "$@"
