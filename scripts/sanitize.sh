#!/usr/bin/env bash
# `make sanitize`: the local and session suites under AddressSanitizer, then under
# ThreadSanitizer, on the tiny model. Each sanitizer builds into its own scratch
# path (.build/asan, .build/tsan), so the normal build is left alone. Only the Swift
# code (library, tests) is instrumented: llama.cpp is the provisioned, uninstrumented
# libllama; ASan still checks its malloc/free, TSan sees none of its accesses.
#   scripts/sanitize.sh [address] [thread]     (both when none is named)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HI_SCRIPTS/.."

export PKG_CONFIG_PATH="$LLAMA_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$LLAMA_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HYBRID_TEST_TINY_MODEL="${HYBRID_TEST_TINY_MODEL:-$HI_MODELS/tiny-random-llama.gguf}"

# Every XCTestCase under Tests/HybridInferenceTests/Local and .../Session, less:
# - DefaultModelTests: the 135M default model (105 of the 110 s under ASan), and its
#   cancellation asserts a 100 ms latency that instrumentation alone can exceed;
# - ExitDuringWorkTests: its children exit() with llama.cpp work in flight on
#   purpose; at exit the sanitizers report on the very teardown they provoke.
skipped='^(DefaultModelTests|ExitDuringWorkTests)$'
classes="$(sed -n 's/^final class \([A-Za-z0-9_]*\): XCTestCase.*/\1/p' \
    Tests/HybridInferenceTests/Local/*.swift Tests/HybridInferenceTests/Session/*.swift |
    grep -Ev "$skipped" | paste -sd'|')"
filter="HybridInferenceTests\\.($classes)/"

# detect_leaks=0: LeakSanitizer's exit-time report is ~700 allocations, nearly all of
# them XCTest's own test registry, Swift runtime error boxes and references kept in
# multi-payload enums, whose spare-bit tags hide the pointer from LSan. A real leak
# shows as growth instead: LocalIsolationTests bounds RSS over 200 sessions (in
# `make test`; under a sanitizer RSS measures the sanitizer).
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(address thread)
for s in "${sanitizers[@]}"; do
    case "$s" in
        address) scratch=.build/asan ;;
        thread) scratch=.build/tsan ;;
        *) hi_die "unknown sanitizer '$s' (address or thread)" ;;
    esac
    start=$SECONDS
    hi_log "$s sanitizer: building into $scratch"
    swift build --build-tests --sanitize="$s" --scratch-path "$scratch" \
        -Xlinker -rpath -Xlinker "$LLAMA_PREFIX/lib"
    built=$SECONDS
    HYBRID_SANITIZER="$s" swift test --skip-build --sanitize="$s" --scratch-path "$scratch" --filter "$filter"
    hi_log "$s sanitizer: clean (build $((built - start)) s, tests $((SECONDS - built)) s)"
done
