#!/usr/bin/env bash
# Runs on a bare Linux x64 GPU machine (CUDA's nvcc, CMake, ninja; no Node.js, no network), from the
# repository root, with .gpu-pack/tatra-gpu.tar.xz (tools/gpu/pack.sh) beside it. Stages, each
# time-boxed under one global deadline, every figure and log written to $OUT as it comes:
#   1. unpack the pack (Node, the built CLI, its dependencies, the llama.cpp source);
#   2. build, in ONE CMake tree on all cores, node-llama-cpp's addon and llama-server from that
#      source (ggml and llama are compiled once and shared), CUDA for sm_90 only; meanwhile write a
#      synthetic Qwen2.5-7B GGUF with tools/synthetic-gguf.ts (bundled);
#   3. install the addon where node-llama-cpp looks for a local build first;
#   4. run the GPU benchmark (bench/gpu.ts, bundled): tatra eval in-process, llama-server's raw
#      bound, tatra eval through the remote backend.
#
#   OUT=/tmp/out bash tools/gpu/far-side.sh                     the real run (CUDA)
#   OUT=/tmp/out TATRA_GPU_REHEARSAL=1 bash tools/gpu/far-side.sh   the same with CUDA off (CPU build,
#        default shape qwen2.5-0.5b, generous time boxes); the build folder is kept between rehearsals
# Knobs: TATRA_GPU_SHAPE (qwen2.5-7b), TATRA_GPU_DEADLINE (seconds for the whole script, 500),
# TATRA_GPU_BUILD_S (300), TATRA_GPU_BENCH_SECONDS (eval window, 35), TATRA_GPU_PARALLEL (16),
# TATRA_GPU_FA (OFF: FlashAttention kernels double the CUDA compile), TATRA_GPU_WORK (/tmp/tatra-gpu),
# TATRA_GPU_JOBS (all cores).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
: "${OUT:?set OUT to the folder that receives the figures and logs}"
mkdir -p "$OUT"
t0=$(date +%s)

rehearsal=${TATRA_GPU_REHEARSAL:-0}
if [ "$rehearsal" = 1 ]; then
  shape=${TATRA_GPU_SHAPE:-qwen2.5-0.5b}; deadline=${TATRA_GPU_DEADLINE:-7200}; build_s=${TATRA_GPU_BUILD_S:-5400}
  model_s=${TATRA_GPU_MODEL_S:-900}
else
  shape=${TATRA_GPU_SHAPE:-qwen2.5-7b}; deadline=${TATRA_GPU_DEADLINE:-500}; build_s=${TATRA_GPU_BUILD_S:-300}
  model_s=${TATRA_GPU_MODEL_S:-240}
fi
window=${TATRA_GPU_BENCH_SECONDS:-35}
parallel=${TATRA_GPU_PARALLEL:-16}
concurrency=${TATRA_GPU_CONCURRENCY:-$parallel}
fa=${TATRA_GPU_FA:-OFF}
work=${TATRA_GPU_WORK:-/tmp/tatra-gpu}
jobs=${TATRA_GPU_JOBS:-$(nproc)}
pack=${TATRA_GPU_PACK:-$repo/.gpu-pack/tatra-gpu.tar.xz}

logf=$OUT/far-side.log
stages=$OUT/stages.txt
: > "$stages"
log() { echo "[far-side +$(( $(date +%s) - t0 ))s] $*" | tee -a "$logf"; }
left() { echo $(( deadline - ($(date +%s) - t0) )); }
# stage NAME BUDGET CMD...: runs CMD under min(BUDGET, time left - 5 s), logs how long it took.
stage() {
  local name=$1 budget=$2; shift 2
  local l; l=$(( $(left) - 5 ))
  [ "$budget" -gt "$l" ] && budget=$l
  if [ "$budget" -le 0 ]; then log "$name: skipped, no time left"; echo "$name skipped" >> "$stages"; return 124; fi
  local s; s=$(date +%s)
  log "$name: start (box ${budget}s)"
  timeout -k 5 "$budget" "$@"
  local rc=$?
  local took=$(( $(date +%s) - s ))
  log "$name: rc=$rc in ${took}s"
  echo "$name rc=$rc ${took}s" >> "$stages"
  return $rc
}
finish() {
  log "total $(( $(date +%s) - t0 ))s"
  cat "$stages" | tee -a "$logf"
}
trap finish EXIT

log "mode: $([ "$rehearsal" = 1 ] && echo 'rehearsal, CUDA off' || echo 'CUDA sm_90'), shape $shape, deadline ${deadline}s, $jobs jobs, FlashAttention kernels $fa"
{ uname -a; nproc; free -g 2>/dev/null | head -2; df -h /tmp 2>/dev/null | tail -1; command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv; command -v nvcc >/dev/null && nvcc --version | tail -2; cmake --version | head -1; ninja --version; } >> "$logf" 2>&1

# ---- 1. unpack
[ -f "$pack" ] || { log "no pack at $pack (run tools/gpu/pack.sh and carry .gpu-pack)"; exit 1; }
unpack() {
  rm -rf "$work/pack" && mkdir -p "$work/pack" || return 1
  if command -v xz >/dev/null; then
    xz -T0 -dc "$pack" | tar -C "$work/pack" -xf - || return 1
  else # no xz-utils: Python's lzma reads it too
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$pack" "$work/pack" || return 1
  fi
  local nlc=$work/pack/app/node_modules/node-llama-cpp/llama
  # The source lives at $work/src (the model tool reads it too). Files keep the commit's time
  # (git archive), so a build folder kept from an earlier rehearsal recompiles only what changed.
  rm -rf "$work/src" && mv "$nlc/llama.cpp" "$work/src" && ln -s "$work/src" "$nlc/llama.cpp"
}
stage unpack 60 bash -c "$(declare -f unpack); work='$work' pack='$pack' unpack" || exit 1
app=$work/pack/app
export PATH=$work/pack/node/bin:$PATH
node -v >> "$logf" 2>&1 || { log "the packed node does not run here"; exit 1; }

# ---- 2. model (background) and build (foreground)
model=$work/synthetic-$shape.gguf
write_model() {
  [ -s "$model" ] && { echo "model already written: $model"; return 0; }
  TATRA_LLAMA_CPP_SRC=$work/src node "$app/tools/synthetic-gguf.mjs" "$shape" --out "$model"
}
( stage model "$model_s" bash -c "$(declare -f write_model); model='$model' work='$work' app='$app' shape='$shape' write_model" >> "$OUT/model.log" 2>&1 ) &
model_pid=$!

if [ "$rehearsal" = 1 ]; then
  gpu_flags=(-DGGML_CUDA=OFF)
  kind=cpu
else
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
  gpu_flags=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA="$fa" -DGGML_CUDA_NCCL=OFF -DGGML_CUDA_COMPRESSION_MODE=none)
  kind=cuda
fi
# As tools/build-llama-server.sh: ggml's AMX kernels crashed on these virtual machines (the GPU
# machines are virtual machines too); every other native instruction stays.
case "$(uname -m)" in x86_64 | amd64) gpu_flags+=("-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16") ;; esac
variant=$(node "$repo/tools/gpu/local-build.mjs" "$app" name "$kind" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).binVariant))')
build=$work/build
configure() {
  cmake -S "$app/node_modules/node-llama-cpp/llama" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_JS_INC="$work/pack/node/include/node" -DCMAKE_JS_SRC= -DCMAKE_JS_LIB= \
    -DNODE_RUNTIME=node -DNODE_RUNTIMEVERSION="$(node -p 'process.versions.node')" -DNODE_ARCH=x64 \
    -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$build/Release" -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$build/bin" \
    -DNLC_CURRENT_PLATFORM=linux-x64 -DNLC_TARGET_PLATFORM=linux-x64 -DNLC_VARIANT="$variant" \
    -DGGML_BUILD_NUMBER=1 -DGGML_METAL=OFF -DGGML_CCACHE=OFF -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_BORINGSSL=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    "${gpu_flags[@]}"
}
build_both() {
  configure > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; return 1; }
  # One tree, two targets: ggml and llama are compiled once for both.
  nice -n 5 ninja -C "$build" -j "$jobs" llama-addon llama-server >> "$OUT/build.log" 2>&1 || { grep -E -m 20 'error|FAILED' "$OUT/build.log"; return 1; }
}
# TATRA_GPU_REHEARSAL_PREBUILT=ADDON_DIR:LLAMA_SERVER (rehearsal only): skip the compile and use
# these, to rehearse every later stage quickly on a machine where compiling takes most of an hour.
prebuilt=${TATRA_GPU_REHEARSAL_PREBUILT:-}
if [ -n "$prebuilt" ] && [ "$rehearsal" = 1 ]; then
  addon_src=${prebuilt%%:*}; server_bin=${prebuilt#*:}
  log "build: skipped, using $addon_src and $server_bin"; echo "build skipped (prebuilt)" >> "$stages"; build_rc=0
else
  addon_src=$build/Release; server_bin=$build/bin/llama-server
  stage build "$build_s" bash -c "$(declare -f configure build_both); $(declare -p gpu_flags); app='$app' work='$work' build='$build' variant='$variant' jobs='$jobs' OUT='$OUT' build_both"
  build_rc=$?
fi
wait "$model_pid"; model_rc=$(awk '$1=="model" {print $2}' "$stages")
cat "$OUT/model.log" >> "$logf"
[ "$build_rc" = 0 ] || { log "build failed (rc=$build_rc): see build.log"; exit 1; }
[ -s "$model" ] || { log "no model ($model_rc): see far-side.log"; exit 1; }

# ---- 3. install the addon as node-llama-cpp's local build
rm -rf "$work/addon" && mkdir -p "$work/addon"
# The addon lands in Release/ (CMAKE_LIBRARY_OUTPUT_DIRECTORY), llama.cpp's shared libraries in
# bin/ beside llama-server; the addon finds them next to itself ($ORIGIN).
for d in "$addon_src" "$(dirname "$server_bin")"; do cp "$d/"*.node "$d/"*.so* "$work/addon/" 2>/dev/null; done
[ -f "$work/addon/llama-addon.node" ] || { log "no llama-addon.node in $addon_src"; exit 1; }
stage install 30 node "$repo/tools/gpu/local-build.mjs" "$app" install "$kind" "$work/addon" >> "$logf" 2>&1 || exit 1
ls -la "$work/addon" "$server_bin" >> "$logf" 2>&1
export LD_LIBRARY_PATH=$build/Release${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
"$server_bin" --version >> "$logf" 2>&1

# ---- 4. the benchmark
# The CPU in the rehearsal; CUDA asked for by name on the GPU machine, so a CUDA runtime that
# node-llama-cpp's detection misses fails loudly instead of measuring the CPU.
if [ "$rehearsal" = 1 ]; then export TATRA_GPU=off; else export TATRA_GPU=cuda; fi
bench_box=$(( $(left) - 10 ))
stage bench "$bench_box" node "$app/tools/bench-gpu.mjs" --app "$app" --model "$model" --server "$server_bin" \
  --data "$work/pack/data/sst2.jsonl" --out "$OUT" --seconds "$window" --parallel "$parallel" \
  --local-concurrency "$concurrency" --flash-attention "$([ "$fa" = ON ] && echo on || echo off)" --until $(( t0 + deadline - 20 )) 2>&1 | tee -a "$logf"
