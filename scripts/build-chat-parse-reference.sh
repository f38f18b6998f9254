#!/usr/bin/env bash
# Builds Tests/ChatParse/chat_parse_reference.cpp (llama.cpp's own split of a model's output
# into reasoning, content and tool calls, the reference of the thought-parity tests) into
# $LLAMA_PREFIX/bin/chat-parse-reference: one C++ compile (~5 s) against the prefix's
# libllama-common.so and the headers of the same llama.cpp source. Does nothing when the
# stamp matches, or when the prefix has no libllama-common.so (a llama.cpp from elsewhere).
#
# Env: LLAMA_SRC=/path/to/vendor/llama.cpp (a source tree already extracted: the set-up's
#      server build passes its own), else LLAMA_SDIST=/path/to/llama_cpp_python-<ver>.tar.gz
#      (headers extracted from it), else the sdist is downloaded from PyPI (a prefix made
#      before this step existed); HI_PYPI_URL (default https://pypi.org); CXX.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SOURCE="$HI_SCRIPTS/../Tests/ChatParse/chat_parse_reference.cpp"
BIN="$LLAMA_PREFIX/bin/chat-parse-reference"
STAMP="$LLAMA_PREFIX/.stamp-chat-parse-reference"
HI_PYPI_URL="${HI_PYPI_URL:-https://pypi.org}"

[ -f "$SOURCE" ] || hi_die "missing $SOURCE"
if [ ! -e "$LLAMA_PREFIX/lib/libllama-common.so" ]; then
    hi_log "no libllama-common.so in $LLAMA_PREFIX: chat-parse-reference not built"
    exit 0
fi
# The libraries' stamp (from the server's build, which made libllama-common) and the source.
want="$(cat "$LLAMA_PREFIX/.stamp-server" 2>/dev/null || true) source=$(hi_sha256 "$SOURCE")"
if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
    exit 0
fi

CXX="${CXX:-}"
if [ -z "$CXX" ]; then
    for c in c++ g++ clang++; do command -v "$c" >/dev/null 2>&1 && { CXX="$c"; break; }; done
fi
[ -n "$CXX" ] || hi_die "no C++ compiler found (on Debian/Ubuntu: apt-get install build-essential)"

t0=$(date +%s)
mkdir -p "$HI_CACHE/build"
WORK="$(mktemp -d "$HI_CACHE/build/chatparse.XXXXXX")"
trap 'rm -rf "$WORK"; rmdir "$HI_CACHE/build" 2>/dev/null || true' EXIT

SRC="${LLAMA_SRC:-}"
if [ -z "$SRC" ]; then
    SDIST_NAME="llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
    SDIST="${LLAMA_SDIST:-$WORK/$SDIST_NAME}"
    if [ -z "${LLAMA_SDIST:-}" ]; then
        PY="$HI_VENV/bin/python"
        [ -x "$PY" ] || PY="$(hi_find_python)"
        hi_log "downloading $SDIST_NAME from PyPI for chat-parse-reference"
        "$PY" "$HI_SCRIPTS/pypi_download.py" "$HI_PYPI_URL" llama-cpp-python \
            "$LLAMA_CPP_PYTHON_VERSION" "$SDIST_NAME" "$SDIST" \
            || hi_die "could not download llama-cpp-python $LLAMA_CPP_PYTHON_VERSION sdist from PyPI"
    fi
    got="$(hi_sha256 "$SDIST")"
    [ "$got" = "$LLAMA_CPP_PYTHON_SHA256" ] || hi_die "sha256 mismatch for $SDIST_NAME: got $got"
    TOP="llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
    tar -xzf "$SDIST" -C "$WORK" "$TOP/common" "$TOP/include" "$TOP/ggml/include" "$TOP/vendor/nlohmann" \
        || hi_die "could not extract llama.cpp's headers from $SDIST_NAME"
    SRC="$WORK/$TOP"
fi

hi_log "building chat-parse-reference"
mkdir -p "$LLAMA_PREFIX/bin"
# Compiled beside, then renamed, so a test running the old binary meanwhile is not disturbed.
if ! "$CXX" -std=c++17 -O1 -I "$SRC/common" -I "$SRC/include" -I "$SRC/ggml/include" -I "$SRC/vendor" \
        "$SOURCE" -o "$WORK/chat-parse-reference" \
        -L "$LLAMA_PREFIX/lib" -lllama-common -lllama -Wl,-rpath,"$LLAMA_PREFIX/lib" >"$WORK/log" 2>&1; then
    tail -n 40 "$WORK/log" >&2
    hi_die "could not compile $SOURCE"
fi
cp "$WORK/chat-parse-reference" "$BIN.new"
mv -f "$BIN.new" "$BIN"
printf '%s' "$want" > "$STAMP"
hi_log "chat-parse-reference built ($(( $(date +%s) - t0 ))s)"
