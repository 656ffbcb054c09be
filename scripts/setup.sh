#!/usr/bin/env bash
# One-time set-up on a fresh machine: system packages, npm dependencies, Electron's binary when
# it can be downloaded, and a build. Safe to run again.
#   bash scripts/setup.sh            everything
#   TATRA_SKIP_ELECTRON=1 ...        do not try to download Electron's binary (CI does this)
#   TATRA_SKIP_LLAMA_SERVER=1 ...    do not build llama-server (the remote-backend tests need it)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== %s\n' "$*"; }

# Debian's Chromium drives the browser-mode end-to-end tests (Playwright's own browser download
# is not reachable everywhere). git unpacks the llama.cpp source bundle for synthetic test models;
# cmake, ninja and g++ build llama-server from it.
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v git >/dev/null || need_apt+=(git)
command -v cmake >/dev/null || need_apt+=(cmake)
command -v ninja >/dev/null || need_apt+=(ninja-build)
command -v g++ >/dev/null || need_apt+=(g++)
if [ ${#need_apt[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "apt-get install ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" fonts-dejavu-core >/dev/null
  else
    echo "warning: please install ${need_apt[*]} (e.g. sudo apt-get install ${need_apt[*]}); browser tests need /usr/bin/chromium" >&2
  fi
fi

say "npm ci"
# package.json's allowScripts lets only better-sqlite3, node-llama-cpp and esbuild run install
# scripts; Electron's binary download is attempted separately below so that a blocked network
# does not fail the whole install.
ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm ci --no-audit --no-fund

if [ "${TATRA_SKIP_ELECTRON:-}" != 1 ] && [ "${CI:-}" != true ] && [ ! -d node_modules/electron/dist ]; then
  say "Electron binary"
  if timeout 120 node node_modules/electron/install.js; then
    echo "Electron binary installed"
  else
    echo "Electron's binary could not be downloaded; the desktop window is unavailable here." >&2
    echo "Browser mode works without it: npm start falls back to 'tatra serve'." >&2
  fi
fi

say "build"
npm run build

# llama-server, built from the llama.cpp source node-llama-cpp ships: the real OpenAI-compatible
# server the remote-backend tests and bench/remote.ts run against (~5-10 min on 2 cores, once).
# A failed build does not fail the set-up: those tests then fail with the build's own error.
if [ "${TATRA_SKIP_LLAMA_SERVER:-}" != 1 ]; then
  say "llama-server (tools/build-llama-server.sh)"
  if ! bash tools/build-llama-server.sh >/dev/null; then
    echo "warning: llama-server could not be built; test/model/remote-llama-server.test.ts will fail with the reason" >&2
  fi
fi
echo
echo "Set-up done. Run the app: npm start    Run the tests: npm test"
