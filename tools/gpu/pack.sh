#!/usr/bin/env bash
# Packs what the `tatra` CLI needs on a bare Linux x64 GPU machine (no Node.js, no network) into
# one compressed file, .gpu-pack/tatra-gpu.tar.xz, for tools/gpu/far-side.sh to unpack and build
# there. The pack holds:
#   node/bin/node        this machine's Node binary (it needs nothing but glibc and libstdc++)
#   node/include/node    Node's headers, for compiling node-llama-cpp's addon (nothing is downloaded)
#   app/                 the built CLI (dist/cli.js and dist/cli-chunks/), package.json, bin/, tasks/, and the production
#                        dependencies it loads, without node-llama-cpp's prebuilt binaries
#                        (@node-llama-cpp/*: the far side compiles its own) and without source
#                        folders nothing loads
#   app/node_modules/node-llama-cpp/llama/llama.cpp   the llama.cpp source node-llama-cpp ships
#                        (its gitRelease.bundle, checked out), so the far side needs no git
#   app/tools/*.mjs      tools/synthetic-gguf.ts and bench/gpu.ts bundled (no tsx there)
#   data/sst2.jsonl      the first rows of the SST-2 test set, for the benchmark (never committed)
#
#   npm run build:node && bash tools/gpu/pack.sh      (prints the pack's path and size last)
#   TATRA_GPU_PACK_ROWS=300 TATRA_GPU_SST2=/path/sst2_test.jsonl bash tools/gpu/pack.sh
#   TATRA_GPU_PACK_LEVEL=1 bash tools/gpu/pack.sh     faster, larger (xz level; default 6)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/.gpu-pack
rows=${TATRA_GPU_PACK_ROWS:-300}
sst2=${TATRA_GPU_SST2:-$root/../shared/datasets/sst2_test.jsonl}

die() { echo "gpu-pack: $*" >&2; exit 1; }
[ -f dist/cli.js ] || die "dist/cli.js is not built (run npm run build:node first)"
[ -f node_modules/node-llama-cpp/llama/gitRelease.bundle ] || die "no llama.cpp bundle in node_modules/node-llama-cpp/llama (run npm ci first)"
[ -f "$sst2" ] || die "no SST-2 rows at $sst2 (set TATRA_GPU_SST2)"
for tool in git xz npm; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

node_bin=$(readlink -f "$(command -v node)")
node_ver=$(node -p process.version)
# The Node binary must not need the libraries of this machine's distribution (libnode, libuv, ICU):
# the GPU machine has glibc and libstdc++ and nothing else of ours.
if ldd "$node_bin" | grep -v -E 'linux-vdso|ld-linux|lib(c|m|dl|pthread|rt|stdc\+\+|gcc_s)\.so' | grep -q '=>'; then
  die "$node_bin links libraries beyond glibc/libstdc++: $(ldd "$node_bin" | tr '\n' ' ')"
fi
headers=""
for h in "$(dirname "$node_bin")/../include/node" /usr/include/node /usr/local/include/node; do
  if [ -f "$h/node_api.h" ] && [ -f "$h/node_version.h" ]; then headers=$h; break; fi
done
[ -n "$headers" ] || die "no Node headers (node_api.h) next to $node_bin or in /usr/include/node"

stage=$(mktemp -d "${TMPDIR:-/tmp}/tatra-gpu-pack.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/node/bin" "$stage/node/include" "$stage/app/tools" "$stage/data" "$out"

cp "$node_bin" "$stage/node/bin/node"
# N-API needs Node's own headers only (napi.h → node_api.h); OpenSSL's are half the folder.
tar -C "$headers" -cf - --exclude=openssl . | (mkdir -p "$stage/node/include/node" && tar -C "$stage/node/include/node" -xf -)
echo "$node_ver" > "$stage/node/VERSION"

# The app: what bin/tatra.js loads, and the task library.
cp package.json "$stage/app/"
cp -r bin tasks "$stage/app/"
mkdir -p "$stage/app/dist"
cp dist/cli.js "$stage/app/dist/"
# The parts of the CLI it loads only for some commands (scripts/build-node.mjs), without their source maps.
mkdir -p "$stage/app/dist/cli-chunks"
cp dist/cli-chunks/*.js "$stage/app/dist/cli-chunks/"

# Production dependencies as npm resolved them, minus prebuilt llama.cpp binaries and the sources
# of native modules already built here.
# npm ls exits non-zero when package.json names a package node_modules lacks (npm install not yet
# run after a pull): pack what is installed, say what is not; the CLI's start below is the judge.
{ npm ls --omit=dev --all --parseable 2>"$stage/npm-ls.err" || true; } | sed "s|^$root/||" | grep '^node_modules/' \
  | grep -v -E '^node_modules/(@node-llama-cpp/|typescript$)' | sort -u > "$stage/deps.txt"
grep -i 'missing:' "$stage/npm-ls.err" | sed 's/^npm error /gpu-pack: warning: /' >&2 || true
[ -s "$stage/deps.txt" ] || die "npm ls listed no production dependencies"
# Nested packages are inside their parents' folders: copy each top-most folder once.
awk 'NR==1 || index($0, prev "/") != 1 { print; prev = $0 }' "$stage/deps.txt" > "$stage/top.txt"
tar -C "$root" -cf - \
  --exclude='node_modules/@node-llama-cpp' \
  --exclude='node_modules/node-llama-cpp/llama/gitRelease.bundle' \
  --exclude='node_modules/node-llama-cpp/llama/localBuilds' \
  --exclude='node_modules/node-llama-cpp/llama/llama.cpp' \
  --exclude='node_modules/node-llama-cpp/bins' \
  --exclude='node_modules/better-sqlite3/deps' \
  --exclude='node_modules/better-sqlite3/src' \
  --exclude='node_modules/better-sqlite3/build/Release/obj*' \
  --exclude='node_modules/better-sqlite3/build/Release/.deps' \
  --exclude='node_modules/better-sqlite3/build/deps' \
  --exclude='node_modules/better-sqlite3/build/Release/test_extension.node' \
  --exclude='node_modules/typescript' --exclude='node_modules/zod/src' \
  --exclude='node_modules/*/test' --exclude='node_modules/*/tests' \
  --exclude='*.map' --exclude='*.d.ts' --exclude='*.d.mts' --exclude='*.d.cts' --exclude='*.md' \
  -T "$stage/top.txt" | tar -C "$stage/app" -xf -
[ -f "$stage/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ] || die "better-sqlite3 has no native build here"

# llama.cpp, checked out from node-llama-cpp's bundle without its history, minus what no build
# of the addon or llama-server reads (docs, CI, other vocabularies, examples, tests; scripts/ stays:
# the server's UI step runs scripts/ui-assets.cmake).
src=$stage/app/node_modules/node-llama-cpp/llama/llama.cpp
git clone -q --no-checkout node_modules/node-llama-cpp/llama/gitRelease.bundle "$stage/llama-git"
mkdir -p "$src"
git -C "$stage/llama-git" archive --format=tar HEAD \
  | tar -C "$src" -xf - \
    --exclude='./docs' --exclude='docs' --exclude='.github' --exclude='media' --exclude='gguf-py' \
    --exclude='examples' --exclude='tests' \
    --exclude='models/*.gguf' --exclude='models/templates' --exclude='*.png' --exclude='*.jpg'
git -C "$stage/llama-git" show HEAD:models/ggml-vocab-qwen2.gguf > "$src/models/ggml-vocab-qwen2.gguf"
mkdir -p "$src/models/templates"
git -C "$stage/llama-git" show HEAD:models/templates/Qwen-Qwen2.5-7B-Instruct.jinja > "$src/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
git -C "$stage/llama-git" rev-parse HEAD > "$src/COMMIT"
rm -rf "$stage/llama-git"

# The synthetic model tool and the GPU benchmark, bundled for plain node.
npx esbuild --bundle --platform=node --target=node20 --format=esm --packages=external --log-level=warning \
  tools/synthetic-gguf.ts --outfile="$stage/app/tools/synthetic-gguf.mjs"
npx esbuild --bundle --platform=node --target=node20 --format=esm --packages=external --log-level=warning \
  bench/gpu.ts --outfile="$stage/app/tools/bench-gpu.mjs"

head -n "$rows" "$sst2" > "$stage/data/sst2.jsonl"
rm -f "$stage/deps.txt" "$stage/top.txt" "$stage/npm-ls.err"

# The packed CLI must start with the packed Node and nothing else: every import resolves inside it.
(cd "$stage" && env -i PATH=/usr/bin:/bin HOME="$stage" node/bin/node app/bin/tatra.js tasks list >/dev/null) \
  || die "the packed CLI does not start (node/bin/node app/bin/tatra.js tasks list failed)"

tar -C "$stage" -cf - node app data | xz -T0 "-${TATRA_GPU_PACK_LEVEL:-6}" > "$out/tatra-gpu.tar.xz.tmp"
mv "$out/tatra-gpu.tar.xz.tmp" "$out/tatra-gpu.tar.xz"
size=$(stat -c %s "$out/tatra-gpu.tar.xz")
echo "gpu-pack: node $node_ver, $(wc -l < "$stage/data/sst2.jsonl") SST-2 rows, llama.cpp $(cut -c1-12 "$src/COMMIT"); unpacked $(du -sm "$stage" | cut -f1) MB"
echo "$out/tatra-gpu.tar.xz $((size / 1024 / 1024)) MiB ($size bytes)"
