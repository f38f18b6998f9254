#!/usr/bin/env bash
# Runs the benchmarks and writes their tables into Benchmarks/RESULTS.md.
# Called by `make bench` after a release build; expects LD_LIBRARY_PATH/PKG_CONFIG_PATH
# from the Makefile. Figures are medians of several runs, each beside its reference.
# Each step's output is kept whole in Benchmarks/history/<date>-make-bench.md, and
# scripts/results-tables.py reads its result lines into table rows: in each section a step
# measured, this CPU's rows become the run's; other CPUs' rows and sections not run stay.
# That also happens when a step fails, for the steps before it.
#   BENCH_STEPS="render parity" scripts/run-benchmarks.sh   runs only the steps named
# The gpu step is not among the default steps: it needs llama.cpp's Vulkan build (or another
# with a GPU) and the package built against it; `make bench-gpu` runs it that way.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HI_SCRIPTS/.."
PY="$(hi_find_python)"

BIN="${BENCH_BIN:-.build/release}"
MODEL="${HYBRID_LOCAL_MODEL:-$HI_MODELS/SmolLM2-135M-Instruct.Q4_1.gguf}"
# The fleet's llama-server model: the tiny one, so its rows read the clients (step below).
FLEET_GGUF="${BENCH_FLEET_MODEL:-${HYBRID_TEST_TINY_MODEL:-$HI_MODELS/tiny-random-llama.gguf}}"
# LLAMA_BENCH_BIN: a llama-bench built elsewhere (same llama.cpp version), else the prefix's.
LLAMA_BENCH="${LLAMA_BENCH_BIN:-$LLAMA_PREFIX/bin/llama-bench}"
THREADS="${BENCH_THREADS:-$(getconf _NPROCESSORS_ONLN)}"
RUNS="${BENCH_RUNS:-7}"
ALL_STEPS="throughput decode depth rule concurrent grammar multiturn promptcache cancel memory render parity cloud sse streaming chunks fleet hedging download thinking image"
STEPS="${BENCH_STEPS:-$ALL_STEPS}"
ALL_STEPS="$ALL_STEPS gpu"
for name in $STEPS; do
    [[ " $ALL_STEPS " == *" $name "* ]] || hi_die "unknown step '$name' in BENCH_STEPS (steps: $ALL_STEPS)"
done
wants() { [[ " $STEPS " == *" $1 "* ]]; }

# The table cells: lscpu "Model name" (ISA); the commit, marked when the tree differs from
# it (RESULTS.md and history/ aside, which runs write); the date.
CPU="$("$PY" scripts/results-tables.py cpu)"
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no -- . ':!Benchmarks/RESULTS.md' ':!Benchmarks/history' 2>/dev/null)" ]; then
    COMMIT="$COMMIT (modified)"
fi
STARTED="$(date -u '+%Y-%m-%d %H:%M UTC')"
HISTORY="Benchmarks/history/$(date -u +%Y-%m-%d-%H%M)-make-bench.md"
OUT="$(mktemp -d)"

# The run's whole output into history/, then the tables of what it measured.
finish() {
    local status=$? name
    if [ -n "$(ls -A "$OUT")" ]; then
        {
            echo "# make bench, $STARTED"
            echo
            echo "- CPU: $CPU, $(getconf _NPROCESSORS_ONLN) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
            echo "- Commit: $COMMIT"
            echo "- llama.cpp: from llama-cpp-python $LLAMA_CPP_PYTHON_VERSION, threads $THREADS, batch 512"
            echo "- Model: $(basename "$MODEL"); the fleet's llama-server: $(basename "$FLEET_GGUF")$(
                wants gpu && echo "; the gpu step: $(basename "${BENCH_GPU_MODEL:-$MODEL}")")"
            echo "- Steps: $STEPS$([ "$status" -eq 0 ] || echo " (stopped by a failure, exit $status)")"
            for name in $ALL_STEPS; do
                [ -f "$OUT/$name" ] || continue
                printf '\n## %s\n\n```text\n' "$name"
                cat "$OUT/$name"
                printf '```\n'
            done
        } > "$HISTORY"
        hi_log "bench: the run's output is in $HISTORY"
        : > "$OUT/rows.tsv"
        for name in $ALL_STEPS; do
            # The calibration check has no goal of its own: its table stays in history/.
            [ -f "$OUT/$name" ] && [ "$name" != rule ] || continue
            "$PY" scripts/results-tables.py rows "$name" "$OUT/$name" >> "$OUT/rows.tsv" \
                || hi_log "bench: $name: its output was not read into a table (it is in $HISTORY)"
        done
        if [ ! -s "$OUT/rows.tsv" ]; then
            hi_log "bench: no result line read: Benchmarks/RESULTS.md left as it was"
        elif "$PY" scripts/results-tables.py write Benchmarks/RESULTS.md "$OUT/rows.tsv" "$CPU" "$COMMIT" "${STARTED%% *}"; then
            hi_log "bench: wrote the tables of this run into Benchmarks/RESULTS.md"
        else
            hi_log "bench: Benchmarks/RESULTS.md not written (above); the run's output is in $HISTORY"
        fi
    fi
    rm -rf "$OUT"
    exit "$status"
}
trap finish EXIT

if wants throughput || wants decode || wants depth || wants rule || wants gpu; then
    [ -x "$LLAMA_BENCH" ] || hi_die "llama-bench missing: run LLAMA_BENCH=ON scripts/setup-llama.sh (or set LLAMA_BENCH_BIN)"
fi

step() { hi_log "bench: $*"; }

if wants throughput; then
    step "local throughput beside llama-bench (threads $THREADS, batch 512, $RUNS runs)"
    "$BIN/local-benchmark" throughput "$MODEL" "$LLAMA_BENCH" "$THREADS" 512 "$RUNS" | tee "$OUT/throughput"
fi

if wants decode; then
    step "streamed decode beside llama-bench tg128 (threads $THREADS, then 1)"
    "$BIN/local-benchmark" decode "$MODEL" "$LLAMA_BENCH" "$THREADS" "$RUNS" | tee "$OUT/decode"
    "$BIN/local-benchmark" decode "$MODEL" "$LLAMA_BENCH" 1 "$RUNS" | tee -a "$OUT/decode"
fi

if wants depth; then
    step "decode at depth 0/256/1,024/3,000 beside llama-bench -fa 0 and -fa 1, a 10-turn chat (five repetitions), prefill at the library's setting"
    "$BIN/local-benchmark" depth "$MODEL" "$LLAMA_BENCH" "$THREADS" "${BENCH_DEPTH_RUNS:-3}" | tee "$OUT/depth"
fi

if wants rule; then
    step "the flash-attention calibration beside llama-bench -fa 1 / -fa 0 by attention head width (FlashAttention.automatic; BENCH_GEMMA=<gemma-3-270m.gguf> adds Gemma 3 270M)"
    LLAMA_BENCH_BIN="$LLAMA_BENCH" LOCAL_BENCHMARK_BIN="$BIN/local-benchmark" scripts/attention-calibration-check.sh "${BENCH_GEMMA:-}" | tee "$OUT/rule"
fi

if wants concurrent; then
    step "sessions answering at once: 1, 4, 16, beside llama-server -np 4"
    "$BIN/local-benchmark" concurrent "$MODEL" "$THREADS" "${BENCH_CONCURRENT_RUNS:-5}" | tee "$OUT/concurrent"
fi

if wants grammar; then
    step "grammar overhead: constrained vs unconstrained decode"
    "$BIN/local-benchmark" grammar "$MODEL" "$THREADS" "$RUNS" | tee "$OUT/grammar"
fi

if wants multiturn; then
    step "multi-turn time to first token"
    "$BIN/local-benchmark" multiturn "$MODEL" | tee "$OUT/multiturn"
fi

if wants promptcache; then
    step "prompt cache: a restored 1,100-token conversation"
    "$BIN/local-benchmark" promptcache "$MODEL" "${BENCH_PROMPT_CACHE_RUNS:-3}" | tee "$OUT/promptcache"
fi

if wants cancel; then
    step "cancellation latency"
    "$BIN/local-benchmark" cancel "$MODEL" | tee "$OUT/cancel"
fi

if wants memory; then
    step "peak memory, 1, 4 and 16 sessions"
    "$BIN/local-benchmark" memory "$MODEL" 1 | tee "$OUT/memory"
    "$BIN/local-benchmark" memory "$MODEL" 4 | tee -a "$OUT/memory"
    "$BIN/local-benchmark" memory "$MODEL" 16 | tee -a "$OUT/memory"
    KV_MIB=$("$HI_VENV/bin/python" - "$MODEL" <<'PY'
import sys
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
def val(key):
    return int(r.fields[f"{arch}.{key}"].parts[-1][0])
heads = val("attention.head_count")
kv_heads = val("attention.head_count_kv") if f"{arch}.attention.head_count_kv" in r.fields else heads
per_token = val("block_count") * val("embedding_length") // heads * kv_heads * 2 * 2
print(f"{per_token * 4096 / 2**20:.1f}")
PY
)
    echo "KV cache per session (4096 tokens, f16): $KV_MIB MiB" | tee -a "$OUT/memory"
    awk -v kv="$KV_MIB" '/with 1 session/ {one=$(NF-1)} /with 4 session/ {four=$(NF-1)}
        END {printf "four sessions %.1f MiB vs one + 4 x KV = %.1f MiB: %s\n", four, one + 4*kv, (four <= one + 4*kv) ? "within target" : "over target"}' \
        "$OUT/memory" | tee -a "$OUT/memory"
fi

if wants render; then
    step "chat template render, 50 turns"
    "$BIN/local-benchmark" render "$MODEL" | tee "$OUT/render"
fi

if wants parity; then
    step "chat template parity: greedy answers beside llama-server --jinja"
    "$BIN/cloud-benchmark" template-parity --local-model "$MODEL" | tee "$OUT/parity"
fi

if wants cloud; then
    step "cloud client beside curl, routing overhead, dead link"
    "$BIN/cloud-benchmark" --local-model "$MODEL" | tee "$OUT/cloud"
fi

if wants sse; then
    step "one large SSE event (1, 5, 20 MB)"
    "$BIN/cloud-benchmark" sse 5 | tee "$OUT/sse"
fi

if wants streaming; then
    step "streaming cost per delta: 200,000 x 1 B and 2,000 x 8 KiB, text and structured, beside a single event"
    "$BIN/cloud-benchmark" streaming "${BENCH_STREAMING_BUDGET:-60}" | tee "$OUT/streaming"
fi

if wants chunks; then
    step "a body in tiny chunks (1 B, 64 B, 64 KiB) beside curl"
    "$BIN/cloud-benchmark" chunks 7 | tee "$OUT/chunks"
fi

if wants fleet; then
    step "remote clients at scale beside curl: the fleet server and llama-server (a slot per request in flight, the tiny model), ${FLEET_ROUNDS:-5} paired rounds"
    # llama-server serves the tiny model: its answer costs ~2 ms of compute, so the
    # rows read the clients; with SmolLM2 the server's compute queue on the same cores
    # moves a round's median by tens of ms, more than the 2 ms the goal allows
    # (Benchmarks/RESULTS.md, "Remote clients at scale"). A failed run is a row that says
    # so, not the end of the run.
    FLEET_ROUNDS="${FLEET_ROUNDS:-5}" "$BIN/cloud-benchmark" fleet --local-model "$FLEET_GGUF" | tee "$OUT/fleet" \
        || echo "(the fleet benchmark failed in this run)" | tee -a "$OUT/fleet"
fi

if wants hedging; then
    step "hedged requests: p99 time to first text against a heavy-tailed loopback server, 1,000 requests"
    "$BIN/cloud-benchmark" hedging --requests "${BENCH_HEDGING_REQUESTS:-1000}" | tee "$OUT/hedging"
fi

if wants download; then
    step "a model download from the loopback CDN beside curl -o and curl -o + sha256sum ($RUNS rounds), then a resume after a cut at 40%"
    "$BIN/local-benchmark" download "$MODEL" "$RUNS" | tee "$OUT/download"
fi

if wants thinking; then
    step "streamed decode through the thought splitter beside the same weights without it ($RUNS rounds)"
    "$BIN/local-benchmark" thinking "$MODEL" "$RUNS" | tee "$OUT/thinking"
fi

if wants image; then
    step "time to first token with one 28x28 image beside llama-mtmd-cli, and a second turn with the image kept ($RUNS runs)"
    VISION="${BENCH_VISION_MODEL:-$HI_MODELS/tiny-random-llava.gguf}"
    PROJECTOR="${BENCH_VISION_PROJECTOR:-$HI_MODELS/tiny-random-llava-mmproj.gguf}"
    [ -f "$VISION" ] && [ -f "$PROJECTOR" ] || hi_die "the vision model or its projector is missing: $VISION, $PROJECTOR"
    # The projector's own size (the tiny one's is 28x28), so that libmtmd resizes nothing.
    "$PY" - "$OUT/image.png" <<'PNG'
import struct, sys, zlib
w = h = 28
rows = b"".join(b"\0" + b"".join(bytes(((x * 9) % 256, (y * 9) % 256, 120)) for x in range(w)) for y in range(h))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PNG
    "$BIN/local-benchmark" image "$VISION" "$PROJECTOR" "$LLAMA_PREFIX/bin/llama-mtmd-cli" "$OUT/image.png" "$RUNS" "$THREADS" | tee "$OUT/image"
fi

if wants gpu; then
    step "every layer on the GPU beside llama-bench -ngl 99 on the same device (threads $THREADS, $RUNS runs)"
    # BENCH_GPU_MODEL: another model for this step alone (lavapipe decodes SmolLM2 at ~1 t/s).
    "$BIN/local-benchmark" gpu "${BENCH_GPU_MODEL:-$MODEL}" "$LLAMA_BENCH" 99 "$THREADS" "$RUNS" | tee "$OUT/gpu"
fi
