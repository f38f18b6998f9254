#!/usr/bin/env bash
# Checks that Sources/CHybridMTMD/mtmd-declarations.h (libmtmd's prototypes and
# structures as the library declares them, since it opens libmtmd at run time
# and builds without its headers) says what the installed mtmd.h and
# mtmd-helper.h say: scripts/check-mtmd-declarations.c is compiled against them
# with _Static_asserts over every prototype and every field's offset, size and type.
#   scripts/check-mtmd-declarations.sh [INCLUDE_DIR]
# INCLUDE_DIR: where mtmd.h is (default: the set-up's prefix, $LLAMA_PREFIX/include).
# Exit 0 when they agree, 1 when they differ, 2 when mtmd.h or a C compiler is missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

include="${1:-$LLAMA_PREFIX/include}"
[ -f "$include/mtmd.h" ] || { hi_log "no mtmd.h in $include (scripts/setup-llama.sh installs it)"; exit 2; }
compiler=""
for candidate in "${CC:-}" cc clang gcc; do
    [ -n "$candidate" ] && command -v "$candidate" >/dev/null 2>&1 && { compiler="$candidate"; break; }
done
[ -n "$compiler" ] || { hi_log "no C compiler (cc, clang or gcc)"; exit 2; }
root="$(cd "$HI_SCRIPTS/.." && pwd)"
if ! "$compiler" -std=gnu11 -fsyntax-only -I"$include" -I"$root/Sources/CHybridMTMD" \
        "$HI_SCRIPTS/check-mtmd-declarations.c"; then
    hi_log "Sources/CHybridMTMD/mtmd-declarations.h differs from $include/mtmd.h (above)"
    exit 1
fi
