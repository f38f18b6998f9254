#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each on its corpus: the parsers that
# read what a server or a file sends (SSE, responses, GGUF, chat templates, schemas,
# JSON prefixes, HTTP/1.1 responses, image headers), and the request encoders a hand-built
# transcript reaches.
#
#   scripts/fuzz.sh                       build, then run every target FUZZ_SECONDS (default 60) at once
#   FUZZ_SECONDS=600 scripts/fuzz.sh      the long run
#   FUZZ_TARGETS="sse" scripts/fuzz.sh    some of: sse response gguf template schema json http1 request image
#   FUZZ_MERGE=1 scripts/fuzz.sh          after the run, minimise each corpus into Fuzz/corpus/<target>
#
# Each target is the library's sources compiled as one module with
# `swiftc -sanitize=fuzzer,address` (swiftc ships its own libFuzzer runtime;
# nothing else is installed), plus one small entry file that imports it with
# @testable. SwiftPM is not used: it cannot build an executable without a
# `main`, which libFuzzer provides. New inputs go to .build/fuzz/<target>/new;
# Fuzz/corpus/<target> is only read unless FUZZ_MERGE=1. A crash leaves its
# input in .build/fuzz/<target>/ (crash-*) and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TARGETS=${FUZZ_TARGETS:-"sse response gguf template schema json http1 request image"}
# An input that takes longer than this is a finding (libFuzzer's own default is 20 minutes):
# the chat template budget stops any template within about a second of CPU even under
# ASan; the rest is margin for nine targets at nice 19 on a busy machine.
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-60}
OUT=.build/fuzz
mkdir -p "$OUT"
# Swift's own backtracer reads the stack in a way ASan reports as an
# underflow; libFuzzer's report is the one wanted.
export SWIFT_BACKTRACE=enable=no

entry() {
  case "$1" in
    sse) echo Fuzz/FuzzSSE.swift ;;
    response) echo Fuzz/FuzzResponse.swift ;;
    gguf) echo Fuzz/FuzzGGUF.swift ;;
    template) echo Fuzz/FuzzTemplate.swift ;;
    schema) echo Fuzz/FuzzSchema.swift ;;
    json) echo Fuzz/FuzzJSONPrefix.swift ;;
    http1) echo Fuzz/FuzzHTTP1.swift ;;
    request) echo Fuzz/FuzzRequest.swift ;;
    image) echo Fuzz/FuzzImage.swift ;;
    *) echo "unknown fuzz target $1" >&2; exit 2 ;;
  esac
}

# The library's targets, instrumented, as the modules the entry files import
# (in dependency order: each module finds the ones before it in $OUT).
MODULES="HybridInferenceCore HybridInferenceRemote HybridInferenceGemini HybridInferenceOpenAI HybridInferenceDownload HybridInferenceJinja HybridInferenceLlama"
STAMP="$OUT/HybridInference.stamp"
if [ ! -f "$STAMP" ] || [ -n "$(find Sources \( -name '*.swift' -o -name '*.[ch]' \) -newer "$STAMP" | head -1)" ]; then
  hi_log "fuzz: building the instrumented library (a few minutes the first time)"
  # The C modules the Swift modules import (CHybridOS, CHybridMTMD), as static libraries.
  for c in CHybridOS CHybridMTMD; do
    clang -c -O -g -fsanitize=address -I "Sources/$c/include" -I "Sources/$c" "Sources/$c/$c.c" -o "$OUT/$c.o"
    rm -f "$OUT/lib$c.a" && ar rcs "$OUT/lib$c.a" "$OUT/$c.o"
  done
  for module in $MODULES; do
    # shellcheck disable=SC2046
    swiftc -emit-library -static -emit-module -parse-as-library -enable-testing -package-name HybridInference \
      -module-name "$module" -O -g -sanitize=fuzzer,address -I "$OUT" \
      -I Sources/CLlama -I Sources/CHybridOS/include -I Sources/CHybridMTMD/include -Xcc -I"$LLAMA_PREFIX/include" \
      -emit-module-path "$OUT/$module.swiftmodule" -o "$OUT/lib$module.a" \
      $(find "Sources/$module" -name '*.swift' | sort)
  done
  touch "$STAMP"
fi
LIBRARIES="$(for module in $MODULES; do echo "-l$module"; done | tac) -lCHybridOS -lCHybridMTMD -ldl"  # dependents first, for the static link

for target in $FUZZ_TARGETS; do
  binary="$OUT/fuzz-$target"
  source=$(entry "$target")
  if [ ! -x "$binary" ] || [ "$source" -nt "$binary" ] || [ "$STAMP" -nt "$binary" ]; then
    hi_log "fuzz: linking $target"
    # gold warns once per ASan helper symbol; the warnings go to a log.
    swiftc -parse-as-library -package-name HybridInference -O -g -sanitize=fuzzer,address -I "$OUT" -I Sources/CLlama \
      -I Sources/CHybridOS/include -I Sources/CHybridMTMD/include -Xcc -I"$LLAMA_PREFIX/include" "$source" -L "$OUT" $LIBRARIES \
      -L "$LLAMA_PREFIX/lib" -Xlinker -rpath -Xlinker "$LLAMA_PREFIX/lib" -o "$binary" \
      > "$OUT/link-$target.log" 2>&1 || { cat "$OUT/link-$target.log" >&2; exit 1; }
  fi
done

pids=()
for target in $FUZZ_TARGETS; do
  mkdir -p "$OUT/$target/new" "Fuzz/corpus/$target"
  hi_log "fuzz: $target for ${FUZZ_SECONDS}s"
  (cd "$OUT/$target" && exec nice -n 19 "../fuzz-$target" -max_total_time="$FUZZ_SECONDS" \
    -rss_limit_mb=2048 -max_len=65536 -timeout="$FUZZ_TIMEOUT" -print_final_stats=1 -artifact_prefix=./ \
    new "$OLDPWD/Fuzz/corpus/$target" > log.txt 2>&1) &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done

for target in $FUZZ_TARGETS; do
  stats=$(grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$OUT/$target/log.txt" | tr '\n' ' ' || true)
  hi_log "fuzz: $target: $stats"
  if ls "$OUT/$target"/crash-* "$OUT/$target"/leak-* "$OUT/$target"/timeout-* > /dev/null 2>&1; then
    hi_log "fuzz: $target FOUND A FAILURE: $(ls "$OUT/$target"/crash-* "$OUT/$target"/leak-* "$OUT/$target"/timeout-* 2>/dev/null | tr '\n' ' ') (log: $OUT/$target/log.txt)"
    status=1
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    mkdir -p "$OUT/$target/merged"
    (cd "$OUT/$target" && "../fuzz-$target" -merge=1 -max_len=65536 merged "$OLDPWD/Fuzz/corpus/$target" new \
      > merge.txt 2>&1)
    rm -rf "Fuzz/corpus/$target" && mv "$OUT/$target/merged" "Fuzz/corpus/$target"
    hi_log "fuzz: $target corpus minimised to $(ls "Fuzz/corpus/$target" | wc -l) inputs"
  fi
done
exit $status
