#!/usr/bin/env bash
# Extracts llama.cpp's Llama 3 vocabulary (models/ggml-vocab-llama-bpe.gguf, vocabulary
# only, no weights) from the pinned llama-cpp-python sdist into $HI_MODELS/vocab, for
# the prompt-parity tests (scripts/make-template-models.py), and prints its path.
# LLAMA_SDIST=/path/to/llama_cpp_python-<ver>.tar.gz uses a local copy, no download.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=ggml-vocab-llama-bpe.gguf
SHA256=97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e
HI_PYPI_URL="${HI_PYPI_URL:-https://pypi.org}"
DEST="$HI_MODELS/vocab/$NAME"

if [ -f "$DEST" ] && [ "$(hi_sha256 "$DEST")" = "$SHA256" ]; then
    printf '%s\n' "$DEST"
    exit 0
fi

PY="$HI_VENV/bin/python"
[ -x "$PY" ] || PY="$(hi_find_python)"
mkdir -p "$HI_MODELS/vocab" "$HI_CACHE/build"
WORK="$(mktemp -d "$HI_CACHE/build/vocab.XXXXXX")"
trap 'rm -rf "$WORK"; rmdir "$HI_CACHE/build" 2>/dev/null || true' EXIT

SDIST_NAME="llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
SDIST="${LLAMA_SDIST:-$WORK/$SDIST_NAME}"
if [ -z "${LLAMA_SDIST:-}" ]; then
    hi_log "downloading $SDIST_NAME from PyPI for $NAME"
    "$PY" "$HI_SCRIPTS/pypi_download.py" "$HI_PYPI_URL" llama-cpp-python \
        "$LLAMA_CPP_PYTHON_VERSION" "$SDIST_NAME" "$SDIST" \
        || hi_die "could not download llama-cpp-python $LLAMA_CPP_PYTHON_VERSION sdist from PyPI"
fi
got="$(hi_sha256 "$SDIST")"
[ "$got" = "$LLAMA_CPP_PYTHON_SHA256" ] || hi_die "sha256 mismatch for $SDIST_NAME: got $got"

MEMBER="llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp/models/$NAME"
tar -xzf "$SDIST" -C "$WORK" "$MEMBER" || hi_die "could not extract $NAME from $SDIST_NAME"
got="$(hi_sha256 "$WORK/$MEMBER")"
[ "$got" = "$SHA256" ] || hi_die "sha256 mismatch for $NAME: got $got, want $SHA256"
mv -f "$WORK/$MEMBER" "$DEST"
printf '%s\n' "$DEST"
