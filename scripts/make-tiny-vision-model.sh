#!/usr/bin/env bash
# Generates the tiny random-weight vision model with scripts/make-tiny-vision-model.py:
# $HI_MODELS/tiny-random-llava.gguf (the text model) and
# $HI_MODELS/tiny-random-llava-mmproj.gguf (its projector, for libmtmd); prints both paths.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

TEXT="$HI_MODELS/tiny-random-llava.gguf"
PROJECTOR="$HI_MODELS/tiny-random-llava-mmproj.gguf"
STAMP="$HI_MODELS/.tiny-random-llava.stamp"
# The text side is make-tiny-model.py's model: its script is part of the stamp too.
stamp_value() {
    printf '%s %s %s' "$(hi_sha256 "$HI_SCRIPTS/make-tiny-vision-model.py")" \
        "$(hi_sha256 "$HI_SCRIPTS/make-tiny-model.py")" "$(cat "$HI_VENV/.hi-stamp" 2>/dev/null | tr '\n' ' ')"
}

if [ -f "$TEXT" ] && [ -f "$PROJECTOR" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(stamp_value)" ]; then
    printf '%s\n%s\n' "$TEXT" "$PROJECTOR"
    exit 0
fi

"$HI_SCRIPTS/setup-python.sh"
mkdir -p "$HI_MODELS"
"$HI_VENV/bin/python" "$HI_SCRIPTS/make-tiny-vision-model.py" "$TEXT" "$PROJECTOR" \
    || hi_die "make-tiny-vision-model.py failed"
stamp_value > "$STAMP"
printf '%s\n%s\n' "$TEXT" "$PROJECTOR"
