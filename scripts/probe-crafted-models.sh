#!/usr/bin/env bash
# Shows what each crafted model file (scripts/make-crafted-models.py) does to llama.cpp
# WITHOUT the library's check: builds scripts/gguf-load-probe.c against the provisioned
# libllama, loads every file in a child process and prints its fate (SIGABRT or a clean
# failure). Not part of `make test`; run after `make setup`.
#   scripts/probe-crafted-models.sh [OUTPUT_DIR]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

dir="${1:-$(mktemp -d)}"
"$HI_VENV/bin/python" "$HI_SCRIPTS/make-crafted-models.py" "$dir" >/dev/null
cc -O1 -o "$dir/probe" "$HI_SCRIPTS/gguf-load-probe.c" -I"$LLAMA_PREFIX/include" \
    -L"$LLAMA_PREFIX/lib" -lllama -Wl,-rpath,"$LLAMA_PREFIX/lib"
for file in "$dir"/*.gguf; do
    kind="$(basename "$file" .gguf)"
    status=0
    # A subshell, so that bash does not report the child's abort itself.
    ( "$dir/probe" "$file" >"$dir/$kind.out" 2>"$dir/$kind.log" ) 2>/dev/null || status=$?
    result="$(grep -a RESULT "$dir/$kind.out" || true)"
    if [ "$status" -ge 128 ]; then
        printf '%-34s ABORTS (signal %d): %s\n' "$kind" $((status - 128)) \
            "$(grep -a -m1 -o 'GGML_ASSERT.*\|GGML_ABORT.*' "$dir/$kind.log" | cut -c1-90)"
    else
        printf '%-34s exit %d: %s\n' "$kind" "$status" "${result#RESULT }"
    fi
done
