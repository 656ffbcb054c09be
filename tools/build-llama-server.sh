#!/usr/bin/env bash
# Builds llama-server (llama.cpp's OpenAI-compatible HTTP server) from the exact llama.cpp source
# that node-llama-cpp's npm package ships (llama/gitRelease.bundle). The remote-backend tests and
# benches drive it as a real OpenAI-compatible server; nothing here is downloaded.
#
# It is built once per machine and llama.cpp release, into the per-user cache that the app uses
# too (electron/paths.ts userCacheDir): $TATRA_CACHE_DIR, else $XDG_CACHE_HOME/tatra-studio, else
# ~/.cache/tatra-studio; the binary is llama-server/<release>/bin/llama-server there. Every clone
# and worktree of the same llama.cpp release shares it (a build takes 5-10 minutes on 2 cores);
# two builds at once wait for each other (flock) instead of compiling twice.
# Idempotent: does nothing when the binary is there and was built from the bundle's commit.
#
#   bash tools/build-llama-server.sh          build if needed; prints the binary's path last
#   TATRA_LLAMA_SERVER=/path/llama-server     use that binary instead (never built; printed as is)
#   TATRA_LLAMA_SERVER_JOBS=1 bash ...        fewer parallel compile jobs (default: all cores)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ -n "${TATRA_LLAMA_SERVER:-}" ]; then
  if [ ! -x "$TATRA_LLAMA_SERVER" ]; then
    echo "build-llama-server: TATRA_LLAMA_SERVER=$TATRA_LLAMA_SERVER is not an executable file" >&2
    exit 1
  fi
  echo "$TATRA_LLAMA_SERVER"
  exit 0
fi

bundle=$root/node_modules/node-llama-cpp/llama/gitRelease.bundle
if [ ! -f "$bundle" ]; then
  echo "build-llama-server: no llama.cpp bundle at $bundle (run npm ci first)" >&2
  exit 1
fi
commit=$(git bundle list-heads "$bundle" | awk '$2 == "HEAD" { print $1 }')
# The release node-llama-cpp names its llama.cpp by (llama.cpp.info.json's tag); the commit where
# it names none.
release=$(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' "$root/node_modules/node-llama-cpp/llama/llama.cpp.info.json" 2>/dev/null | head -n 1)
release=${release:-$commit}

cache=${TATRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tatra-studio}
out=$cache/llama-server/$release
bin=$out/bin/llama-server
stamp=$out/bin/commit

# GGML_NATIVE compiles llama.cpp's AMX kernels on CPUs that advertise AMX (Sapphire Rapids and
# later), and on these virtual machines the first AMX matrix multiply crashes the server
# (SIGSEGV in ggml_backend_amx_mul_mat, found with gdb on the synthetic Q8_0 models). Explicit
# -mno-amx-* flags win over -march=native in GCC and Clang whatever their order, so the server keeps
# every other native instruction (AVX-512, VNNI) and uses the same kernels as node-llama-cpp's own
# prebuilt binaries. The stamp names the flags, so a binary built without them is rebuilt.
cpu_flags=""
case "$(uname -m)" in
  x86_64 | amd64) cpu_flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" ;;
esac
build_id="$commit no-amx"
current() { [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$build_id" ]; }
if current; then
  echo "$bin"
  exit 0
fi

mkdir -p "$out"
# One build at a time per release: whoever comes second waits, then finds the binary current.
if command -v flock >/dev/null; then
  exec 9>"$out/.lock"
  flock 9
  if current; then
    echo "$bin"
    exit 0
  fi
fi

# Clones made before the binary moved to the user's cache built it into their own
# .cache/llama-server: the same commit and flags are taken over instead of compiled again.
old=$root/.cache/llama-server/bin
if [ -x "$old/llama-server" ] && [ "$(cat "$old/commit" 2>/dev/null)" = "$build_id" ]; then
  mkdir -p "$out/bin"
  cp "$old/llama-server" "$bin.tmp"
  mv "$bin.tmp" "$bin"
  echo "$build_id" > "$stamp"
  echo "build-llama-server: took over $old/llama-server (.cache/llama-server in this clone can be removed)" >&2
  echo "$bin"
  exit 0
fi

for tool in git cmake ninja g++; do
  command -v "$tool" >/dev/null || { echo "build-llama-server: $tool is not installed (apt-get install cmake ninja-build g++ git)" >&2; exit 1; }
done

src=$out/src
if [ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" != "$commit" ]; then
  rm -rf "$src" "$src.tmp"
  git -c advice.detachedHead=false clone -q "$bundle" "$src.tmp"
  mv "$src.tmp" "$src"
fi

# A static, CPU-only server: no web UI (its prebuilt assets would be downloaded), no HTTPS, no tests
# or examples. GGML_NATIVE targets the machine that runs the tests, which is the one building.
cmake -S "$src" -B "$out/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS="$cpu_flags" \
  -DCMAKE_CXX_FLAGS="$cpu_flags" \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=ON \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_APP=OFF >/dev/null
jobs=${TATRA_LLAMA_SERVER_JOBS:-$(nproc)}
nice -n 10 ninja -C "$out/build" -j "$jobs" llama-server >&2

mkdir -p "$out/bin"
cp "$out/build/bin/llama-server" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "$build_id" > "$stamp"
"$bin" --version >&2 || true
echo "$bin"
