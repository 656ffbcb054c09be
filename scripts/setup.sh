#!/usr/bin/env bash
# One-time set-up on a fresh machine: system packages, npm dependencies, Electron's binary when
# it can be downloaded, and a build. Safe to run again.
#   bash scripts/setup.sh            everything
#   TATRA_SKIP_ELECTRON=1 ...        do not try to download Electron's binary (CI does this)
#   TATRA_BUILD_LLAMA_SERVER=1 ...   also build llama-server now (otherwise the tests and benches that
#                                    drive it build it on first need: once per machine and llama.cpp
#                                    release, into ~/.cache/tatra-studio/llama-server/)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== %s\n' "$*"; }

# Debian's Chromium drives the browser-mode end-to-end tests (Playwright's own browser download
# is not reachable everywhere). git unpacks the llama.cpp source bundle for synthetic test models;
# cmake, ninja and g++ build llama-server from it when a test first needs it.
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

# Debian's headless shell of the same Chromium runs the headless browser tests a fifth faster than
# the full browser does (e2e/browser.ts). Optional: without it they run in the full browser.
if [ ! -x /usr/lib/chromium/chromium-headless-shell ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "apt-get install chromium-headless-shell"
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null; } \
      || echo "warning: chromium-headless-shell could not be installed; the browser tests run in the full browser (slower)" >&2
  else
    echo "note: sudo apt-get install chromium-headless-shell makes the browser tests a fifth faster" >&2
  fi
fi

say "npm ci"
# package.json's allowScripts lets only better-sqlite3, node-llama-cpp and esbuild run install
# scripts; Electron's binary download is attempted separately below so that a blocked network
# does not fail the whole install. Where better-sqlite3's prebuilt binary cannot be downloaded
# (GitHub unreachable) it compiles SQLite and its addon: JOBS=max lets node-gyp run those
# compiles on every core at once instead of one after another.
JOBS=max ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm ci --no-audit --no-fund --prefer-offline

if [ "${TATRA_SKIP_ELECTRON:-}" != 1 ] && [ "${CI:-}" != true ] && [ ! -d node_modules/electron/dist ]; then
  say "Electron binary"
  # Its installer prints a stack trace when the download fails: kept out of the output, the
  # reason said in one line.
  electron_log=$(mktemp)
  if timeout 120 node node_modules/electron/install.js >"$electron_log" 2>&1; then
    echo "Electron binary installed"
  else
    reason=$(grep -m1 -oE '(RequestError|Error|HTTPError)[^:]*: .*' "$electron_log" | head -c 200 || true)
    echo "Electron's binary could not be downloaded${reason:+ ($reason)}; the desktop window is unavailable here." >&2
    echo "Browser mode works without it: npm start falls back to 'tatra serve'." >&2
  fi
  rm -f "$electron_log"
fi

say "build"
npm run build

# llama-server, built from the llama.cpp source node-llama-cpp ships: the real OpenAI-compatible
# server the remote-backend tests and bench/remote.ts run against (~5-10 min on 2 cores, once per
# machine and llama.cpp release: it is kept in the per-user cache, shared by every clone). The app
# never needs it, so the set-up leaves it to the first test or bench that does (the model and e2e
# tests' global set-ups, test/helpers/llama-server.ts), unless asked here.
if [ "${TATRA_BUILD_LLAMA_SERVER:-}" = 1 ]; then
  say "llama-server (tools/build-llama-server.sh)"
  if ! bash tools/build-llama-server.sh >/dev/null; then
    echo "warning: llama-server could not be built; the tests that drive it will fail with the reason" >&2
  fi
fi
echo
echo "Set-up done. Run the app: npm start    Run the tests: npm test"
