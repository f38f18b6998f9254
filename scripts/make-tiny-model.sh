#!/usr/bin/env bash
# Generates $HI_MODELS/tiny-random-llama.gguf with scripts/make-tiny-model.py and prints its path.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

OUT="$HI_MODELS/tiny-random-llama.gguf"
STAMP="$HI_MODELS/.tiny-random-llama.stamp"
want="$(hi_sha256 "$HI_SCRIPTS/make-tiny-model.py") $(cat "$HI_VENV/.hi-stamp" 2>/dev/null | tr '\n' ' ')"

if [ -f "$OUT" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    printf '%s\n' "$OUT"
    exit 0
fi

"$HI_SCRIPTS/setup-python.sh"
want="$(hi_sha256 "$HI_SCRIPTS/make-tiny-model.py") $(cat "$HI_VENV/.hi-stamp" 2>/dev/null | tr '\n' ' ')"
mkdir -p "$HI_MODELS"
"$HI_VENV/bin/python" "$HI_SCRIPTS/make-tiny-model.py" "$OUT" \
    || hi_die "make-tiny-model.py failed"
printf '%s' "$want" > "$STAMP"
printf '%s\n' "$OUT"
