#!/usr/bin/env bash
# Creates $HI_VENV with pinned build/conversion tools (binary wheels only); jinja2,
# the reference renderer of scripts/render-chat-templates.py; and huggingface_hub
# (with its dependencies, each pinned), the reference client of the Hugging Face
# hub and of its cache layout that the model download tests check the library
# against (Tests/HubServer/hf_reference.py).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PINS=(cmake==3.31.10 ninja==1.13.0 numpy==2.3.5 gguf==0.17.1 pyyaml==6.0.2 tqdm==4.67.1 jinja2==3.1.6 markupsafe==3.0.2
    huggingface_hub==0.30.2 filelock==4.3.2 fsspec==2026.9.0 packaging==26.4 requests==2.34.2
    certifi==2026.10.19.post1 charset-normalizer==3.5.3 idna==3.21 urllib3==2.8.0 typing-extensions==4.16.0)
STAMP="$HI_VENV/.hi-stamp"
WANT="$(printf '%s\n' "${PINS[@]}")"

if [ -x "$HI_VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    exit 0
fi

PY="$(hi_find_python)"
mkdir -p "$HI_CACHE"
if [ ! -x "$HI_VENV/bin/python" ]; then
    hi_log "creating Python venv at $HI_VENV"
    "$PY" -m venv "$HI_VENV" || hi_die "python3 -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)"
fi
hi_log "installing ${PINS[*]} into $HI_VENV"
"$HI_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --only-binary :all: "${PINS[@]}" || hi_die "pip install of ${PINS[*]} failed"
printf '%s' "$WANT" > "$STAMP"
