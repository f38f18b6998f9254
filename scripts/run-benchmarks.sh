#!/usr/bin/env bash
# Runs every benchmark of issue 4 and writes Benchmarks/RESULTS.md.
# Called by `make bench` after a release build; expects LD_LIBRARY_PATH/PKG_CONFIG_PATH
# from the Makefile. Figures are medians of several runs, each beside its reference.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HI_SCRIPTS/.."

BIN=.build/release
MODEL="${HYBRID_LOCAL_MODEL:-$HI_MODELS/SmolLM2-135M-Instruct.Q4_1.gguf}"
# The fleet's llama-server model: the tiny one, so its rows read the clients (step below).
FLEET_GGUF="${BENCH_FLEET_MODEL:-${HYBRID_TEST_TINY_MODEL:-$HI_MODELS/tiny-random-llama.gguf}}"
# LLAMA_BENCH_BIN: a llama-bench built elsewhere (same llama.cpp version), else the prefix's.
LLAMA_BENCH="${LLAMA_BENCH_BIN:-$LLAMA_PREFIX/bin/llama-bench}"
THREADS="${BENCH_THREADS:-$(getconf _NPROCESSORS_ONLN)}"
RUNS="${BENCH_RUNS:-7}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

[ -x "$LLAMA_BENCH" ] || hi_die "llama-bench missing: run LLAMA_BENCH=ON scripts/setup-llama.sh (or set LLAMA_BENCH_BIN)"

step() { hi_log "bench: $*"; }

step "local throughput beside llama-bench (threads $THREADS, batch 512, $RUNS runs)"
"$BIN/local-benchmark" throughput "$MODEL" "$LLAMA_BENCH" "$THREADS" 512 "$RUNS" | tee "$OUT/throughput"

step "streamed decode beside llama-bench tg128 (threads $THREADS, then 1)"
"$BIN/local-benchmark" decode "$MODEL" "$LLAMA_BENCH" "$THREADS" "$RUNS" | tee "$OUT/decode"
"$BIN/local-benchmark" decode "$MODEL" "$LLAMA_BENCH" 1 "$RUNS" | tee -a "$OUT/decode"

step "decode at depth 0/256/1,024/3,000 beside llama-bench -fa 0 and -fa 1, a 10-turn chat (five repetitions), prefill at the library's setting"
"$BIN/local-benchmark" depth "$MODEL" "$LLAMA_BENCH" "$THREADS" "${BENCH_DEPTH_RUNS:-3}" | tee "$OUT/depth"

step "the flash-attention calibration beside llama-bench -fa 1 / -fa 0 by attention head width (FlashAttention.automatic; BENCH_GEMMA=<gemma-3-270m.gguf> adds Gemma 3 270M)"
LLAMA_BENCH_BIN="$LLAMA_BENCH" LOCAL_BENCHMARK_BIN="$BIN/local-benchmark" scripts/attention-calibration-check.sh "${BENCH_GEMMA:-}" | tee "$OUT/rule"

step "sessions answering at once: 1, 4, 16, beside llama-server -np 4"
"$BIN/local-benchmark" concurrent "$MODEL" "$THREADS" "${BENCH_CONCURRENT_RUNS:-5}" | tee "$OUT/concurrent"

step "grammar overhead: constrained vs unconstrained decode"
"$BIN/local-benchmark" grammar "$MODEL" "$THREADS" "$RUNS" | tee "$OUT/grammar"

step "multi-turn time to first token"
"$BIN/local-benchmark" multiturn "$MODEL" | tee "$OUT/multiturn"

step "prompt cache: a restored 1,100-token conversation"
"$BIN/local-benchmark" promptcache "$MODEL" "${BENCH_PROMPT_CACHE_RUNS:-3}" | tee "$OUT/promptcache"

step "cancellation latency"
"$BIN/local-benchmark" cancel "$MODEL" | tee "$OUT/cancel"

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

step "chat template render, 50 turns"
"$BIN/local-benchmark" render "$MODEL" | tee "$OUT/render"

step "chat template parity: greedy answers beside llama-server --jinja"
"$BIN/cloud-benchmark" template-parity --local-model "$MODEL" | tee "$OUT/parity"

step "cloud client beside curl, routing overhead, dead link"
"$BIN/cloud-benchmark" --local-model "$MODEL" | tee "$OUT/cloud"

step "one large SSE event (1, 5, 20 MB)"
"$BIN/cloud-benchmark" sse 5 | tee "$OUT/sse"

step "streaming cost per delta: 200,000 x 1 B and 2,000 x 8 KiB, text and structured, beside a single event"
"$BIN/cloud-benchmark" streaming "${BENCH_STREAMING_BUDGET:-60}" | tee "$OUT/streaming"

step "a body in tiny chunks (1 B, 64 B, 64 KiB) beside curl"
"$BIN/cloud-benchmark" chunks 7 | tee "$OUT/chunks"

step "remote clients at scale beside curl: the fleet server and llama-server (a slot per request in flight, the tiny model), ${FLEET_ROUNDS:-5} paired rounds"
# llama-server serves the tiny model: its answer costs ~2 ms of compute, so the
# rows read the clients; SmolLM2's ~400 ms compute queue on shared cores moves a
# round's median by tens of ms (RESULTS §7). A failed run is reported, not fatal.
FLEET_ROUNDS="${FLEET_ROUNDS:-5}" "$BIN/cloud-benchmark" fleet --local-model "$FLEET_GGUF" | tee "$OUT/fleet" \
    || echo "(the fleet benchmark failed in this run: see the reading note)" | tee -a "$OUT/fleet"

CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
{
    echo "# Benchmark results"
    echo
    echo "Written by \`make bench\` (scripts/run-benchmarks.sh); every figure is the median of"
    echo "several runs, measured in the same run as its reference."
    echo
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- Commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- Machine: $(getconf _NPROCESSORS_ONLN) cores, $CPU_MODEL, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    echo "- llama.cpp: from llama-cpp-python $LLAMA_CPP_PYTHON_VERSION, native CPU build, threads $THREADS, batch 512"
    echo "- Model: $(basename "$MODEL")"
    echo "- Command: \`make bench\`"
    echo
    echo "## 1. Local throughput beside llama-bench (target: decode >= 0.97x, prefill >= 0.95x)"
    echo; echo '```'; cat "$OUT/throughput"; echo '```'; echo
    echo "Reading these: on this shared 2-core VM llama-bench's own figures move by 10-25%"
    echo "from one minute to the next (tg128 between 67 and 97 t/s in one hour), so each"
    echo "repetition of ours runs right beside one of llama-bench's and the ratio is of"
    echo "medians. Across a dozen runs the prefill ratio spread over 0.87-1.13 and the"
    echo "decode ratio over 0.62-1.04. The same-process line runs llama.cpp's C API"
    echo "directly (no library, on a compute lane) beside it. This decode is timed with"
    echo "respond after a prefill in the same process; section 1b is the streamed one."
    echo
    echo "## 1b. Streamed decode (issue 14, target: >= 0.97x llama-bench tg128 at $THREADS threads and at 1)"
    echo
    echo "- CPU: $CPU_MODEL (lscpu \"Model name\"), $(getconf _NPROCESSORS_ONLN) CPUs"
    echo "- llama-bench: \`-m $(basename "$MODEL") -p 0 -n 128 -d <prompt tokens> -t <threads> -b 512 -ub 512 -r 1 -o json\` (weights repacked, llama.cpp's default and the library's), once per run, alternated with ours; -d puts our prompt's tokens in the KV cache"
    echo "- Ours: \`GenerativeModelSession.streamResponse\`, greedy, 128 tokens, timed from the first snapshot to the last; \`respond\` beside it"
    echo; echo '```'; cat "$OUT/decode"; echo '```'; echo
    echo "Reading these: llama.cpp is built with OpenMP (libgomp). libgomp keeps a thread team per"
    echo "thread that starts parallel work, and once a process holds more such threads than cores"
    echo "it sleeps on a futex at every barrier instead of spinning (hundreds per token). With a"
    echo "thread per context, two contexts on two cores did that: about 700 voluntary context"
    echo "switches per token and a third of llama-bench's speed (the 0.30x of the earlier"
    echo "RESULTS.md, where the in-process C API line suffered alike). The contexts now share the"
    echo "compute lanes (\`ComputeLanes\`): one team per scheduler the compute budget lets run."
    echo "Run to run, on this shared VM, the streamed ratio moved between 0.93 and 1.0 at 2 threads"
    echo "and 0.95-0.98 at 1; under perf, the library's own code (Swift, the scheduler, sampling"
    echo "glue) is under 1% of the samples of a streamed decode, the rest is ggml's compute."
    echo
    echo "## 1d. Attention at depth (issue 22, goals: streamed decode >= 0.95x the faster of llama-bench -fa 0 / -fa 1 at each depth and at every turn of a chat; prefill >= 0.95x pp512 at the same setting)"
    echo
    echo "- CPU: $CPU_MODEL (lscpu \"Model name\"), $(getconf _NPROCESSORS_ONLN) CPUs"
    echo "- Ours: \`LocalSystemModel(contextSize: 4096)\` with \`flashAttention: .off\` and \`.on\` (two model values; \`.automatic\` is whichever it decides), a new session per depth, \`streamResponse\`, greedy, 128 tokens, timed from the first snapshot to the last; llama-bench \`-p 0 -n 128 -d <our prompt's tokens> -fa 0,1 -r 1\` in the same round, ours first in even rounds and llama-bench first in odd ones; each ratio is taken within its round, the table prints the median and the spread (lowest-highest) over the rounds"
    echo; echo '```'; cat "$OUT/depth"; echo '```'; echo
    echo "### What \`.automatic\` is decided from: the calibration beside llama-bench"
    echo
    echo "The calibration's predicted per-token difference (on - off) beside llama-bench tg64 -fa 1 - -fa 0 at the same depths (scripts/attention-calibration-check.sh); h96/h192 and random copies split the same weights into other head widths: only attention differs."
    echo; cat "$OUT/rule"; echo
    echo "## 1c. Sessions answering at once (issue 14, goal 2: 4 sessions >= 1.3x one; 16 not slower than 4)"
    echo; echo '```'; cat "$OUT/concurrent"; echo '```'; echo
    echo "Reading these: the sessions of one model value share one llama context, a sequence"
    echo "(KV stream) each, and one scheduler decodes a token for every answering sequence in"
    echo "a single llama_decode, prefill chunks filling the rest of the batch (\`BatchedContext\`,"
    echo "\`parallelRequests\` = 4 by default: with 16 sessions, 12 wait for a sequence, as 12"
    echo "of 16 requests wait for a slot of llama-server -np 4). A step of four tokens costs"
    echo "about 2.5x a step of one on an Intel Xeon and nearly 4x on an AVX2 AMD EPYC (Q4_1 matmuls"
    echo "are dot products per token: ggml repacks no Q4_1 for batches), so four sessions get 1.15-1.5x one. While several answer, each gets its text every fourth"
    echo "step (waking four consumer tasks every step cost about 3%: 0.938x llama-server before). Each round's prompts are new (round and session in"
    echo "the text, the first word alternating with the round) so that neither side reuses another"
    echo "request's words; both reuse the template's own opening (SmolLM2's default system turn)."
    echo "llama-server runs beside, on the same cores, with \`--cache-ram 0\` (its RAM prompt cache"
    echo "would restore an earlier round's request), driven by a Python client"
    echo "(scripts/llama-server-sessions.py); the last lines print the prompt tokens each side"
    echo "decoded per round, which must match for the speeds to compare."
    echo
    echo "## Structured output: grammar overhead on decode (issue 11: under 15%)"
    echo; echo '```'; cat "$OUT/grammar"; echo '```'; echo
    echo "## 2. Multi-turn time to first token (target: turn 8 <= 1.3x turn 1 with KV reuse)"
    echo; echo '```'; cat "$OUT/multiturn"; echo '```'; echo
    echo "Reading these: since the batched context, \`prepare()\` makes the context too, so turn 1"
    echo "no longer pays for making it (about 50 ms in earlier runs, where turn 1 read 155 ms);"
    echo "turn 8 is what it was (134-148 ms across runs), and the ratio to the faster turn 1"
    echo "reads 1.3-1.4. Each later turn prefills only its new tokens; what grows is their"
    echo "attention over the conversation held in the cache."
    echo
    echo "## 2b. A restored conversation with the prompt cache (issue 23)"
    echo; echo '```'; cat "$OUT/promptcache"; echo '```'; echo
    echo "## Cancellation on the default model (issue 5: within 100 ms)"
    echo; echo '```'; cat "$OUT/cancel"; echo '```'; echo
    echo "## 5. Memory (target: four sessions <= one + 4 x KV cache; issue 14: RSS for 1, 4 and 16 sessions)"
    echo; echo '```'; cat "$OUT/memory"; echo '```'; echo
    echo "Reading these: one context per model value. It starts with one sequence (one window of"
    echo "KV cache), so an app that answers one session at a time pays for one; the first time"
    echo "more requests wait than it has sequences it is made again with \`parallelRequests\`"
    echo "(4) of them, and 4 or 16 sessions cost those four windows of KV cells, whatever the"
    echo "number of sessions, instead of a context (KV cache, compute buffers, thread team) each."
    echo
    echo "## 7. Chat template render (issue 10, target: a 50-turn conversation under 1 ms)"
    echo; echo '```'; cat "$OUT/render"; echo '```'; echo
    sed 's/^## /## 7. /' "$OUT/parity"
    echo "Reading these: every turn's prompt is the same text on both sides (the test"
    echo "OpenAIDefaultModelTests.testOurRenderedPrompt_equalsLlamaServersApplyTemplate checks it"
    echo "against the server's /apply-template), so a differing turn is the arithmetic of that"
    echo "turn (how the KV cache was filled across turns, batch splits), not the template."
    echo
    echo "## 3, 4. Cloud client beside curl, routing overhead"
    echo
    sed 's/^## /### /' "$OUT/cloud"
    echo
    echo "Reading the cloud figures: the cores are shared by the client, the single-process"
    echo "Python server and curl, so runs vary by about 0.3 ms sequentially and more at 32 in"
    echo "flight. Almost all of the client's cost over curl is FoundationNetworking's own (the"
    echo "bare delegate URLSession row); the library adds a few tenths of a millisecond."
    echo "The dead-link figures (issue 9): the first prefer-cloud request pays the connect"
    echo "timeout once; later ones go straight to the secondary while the offline verdict"
    echo "is remembered (target: within 50 ms of the secondary alone)."
    echo
    sed 's/^## /## 6. /' "$OUT/sse"
    echo
    echo "Reading these: before the scan cursor (commit caf0060, measured once on the same"
    echo "machine with the same benchmark) the same events took 335 ms, 2.5 s and 24.9 s"
    echo "(3.0, 2.0 and 0.8 MB/s). The parser alone (SSEParser built with -O, fed 64 KiB"
    echo "chunks) ran at 144, 143 and 136 MB/s for 1, 5 and 20 MB, flat. End to end, the rest"
    echo "of the path (copies of the text for decoding, the JSON and the snapshot) sets the"
    echo "rate, and on these shared cores the 20 MB / 1 MB ratio varied between 0.55 and 0.99"
    echo "across runs on the day it was added."
    echo
    sed 's/^## /## 6b. /' "$OUT/streaming"
    echo
    echo "Reading these: the session's stream is driven by its caller (\`StreamedTurn\`): a"
    echo "snapshot is made when the caller asks, the turn's text is one String appended in place"
    echo "and shared by the snapshot, and the response is mutated in place, so a delta costs what"
    echo "it adds: the last tenth of the deltas costs no more than the first (the first tenth"
    echo "also pays for the allocator growing two strings from nothing, and on these shared cores"
    echo "for whatever else ran then). Memory grows like the text: two growing copies (the text"
    echo "snapshots share, and the response's text part), each with Swift's doubling capacity,"
    echo "where the single event holds one. Before (commit 14fb844, measured right after on the"
    echo "same machine with the same benchmark) the session pushed a snapshot per delta into an"
    echo "unbounded buffer and rebuilt the text twice per delta: 200,000 x 1 B took 874 ms with"
    echo "the last tenth at 1.45x the first and 11.9 MiB of growth, 2,000 x 8 KiB took 2.74 s at"
    echo "3.4 ms a delta by the end (77x the first tenth). The structured rows add the prefix"
    echo "parse of every snapshot, still from the start here (another change makes it"
    echo "incremental); a row that meets the budget says how far it got."
    echo
    cat "$OUT/chunks"
    echo
    echo "Reading these: with one-byte chunks the wire carries six bytes a byte of answer. The"
    echo "client reads every response of a client on one poller thread, so its parse of a"
    echo "chunk's frame must be cheap: a size line whole in a read is parsed in place, and the"
    echo "body is gathered in an array, not appended to \`Data\` chunk by chunk. Before (8709178,"
    echo "measured alternated with it on an AVX2 AMD EPYC) the 1 B row read 4.2-4.3x curl's time"
    echo "and the 64 B row (the size of a streamed token's SSE event) 2.0x. The 64 KiB row is"
    echo "the JSON decoding and checks of a 1 MB answer, which curl does not do."
    echo
    sed 's/^## /## 7. /' "$OUT/fleet"
    echo
    echo "Reading these: client, server and curl share the same cores. llama-server serves the"
    echo "tiny model with a slot per request in flight (-np N, --threads-http 160), so an answer"
    echo "costs it ~2 ms of compute and the rows read the clients; the -np 4 rows queue 32"
    echo "requests for 4 slots and do not carry the goal. Against SmolLM2 (BENCH_FLEET_MODEL)"
    echo "the server's compute queue (~400 ms a request here) moves a round's median by tens of"
    echo "ms, more than the 2 ms goal. The goal is read on the medians of paired rounds."
    echo "A request that fails counts with the time it took, in the last column."
    echo
} > Benchmarks/RESULTS.md
hi_log "bench: wrote Benchmarks/RESULTS.md"
