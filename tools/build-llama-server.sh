#!/usr/bin/env bash
# Builds llama-server (llama.cpp's OpenAI-compatible HTTP server) from the exact llama.cpp source
# that node-llama-cpp's npm package ships (llama/gitRelease.bundle), into .cache/llama-server/.
# The remote-backend tests drive it as a real OpenAI-compatible server; nothing here is downloaded.
# Idempotent: does nothing when the binary is there and was built from the bundle's commit.
#
#   bash tools/build-llama-server.sh          build if needed; prints the binary's path last
#   TATRA_LLAMA_SERVER_JOBS=1 bash ...        fewer parallel compile jobs (default: all cores)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bundle=$root/node_modules/node-llama-cpp/llama/gitRelease.bundle
out=$root/.cache/llama-server
bin=$out/bin/llama-server
stamp=$out/bin/commit

if [ ! -f "$bundle" ]; then
  echo "build-llama-server: no llama.cpp bundle at $bundle (run npm ci first)" >&2
  exit 1
fi
for tool in git cmake ninja g++; do
  command -v "$tool" >/dev/null || { echo "build-llama-server: $tool is not installed (apt-get install cmake ninja-build g++ git)" >&2; exit 1; }
done

commit=$(git bundle list-heads "$bundle" | awk '$2 == "HEAD" { print $1 }')

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
if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$build_id" ]; then
  echo "$bin"
  exit 0
fi

src=$out/src
if [ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" != "$commit" ]; then
  rm -rf "$src" "$src.tmp"
  mkdir -p "$out"
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
