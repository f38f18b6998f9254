# shellcheck shell=bash
# Shared settings for the HybridInference provisioning scripts. Source it; do not run it.

HI_CACHE="${HYBRID_INFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hybrid-inference}"

# llama.cpp is taken from the vendored copy inside the llama-cpp-python sdist on PyPI.
LLAMA_CPP_PYTHON_VERSION=0.3.36
LLAMA_CPP_PYTHON_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

# LLAMA_GPU=vulkan selects a second build (Vulkan, backends loaded at run time) with a
# prefix of its own, so the default CPU build, its stamps and its users are untouched.
LLAMA_GPU="${LLAMA_GPU:-none}"
case "$LLAMA_GPU" in
    none) LLAMA_PREFIX="${PREFIX:-$HI_CACHE/llama.cpp-$LLAMA_CPP_PYTHON_VERSION}" ;;
    vulkan) LLAMA_PREFIX="${PREFIX:-$HI_CACHE/llama.cpp-$LLAMA_CPP_PYTHON_VERSION-vulkan}" ;;
    *) printf 'hybrid-inference: error: LLAMA_GPU=%s: expected none or vulkan\n' "$LLAMA_GPU" >&2; exit 1 ;;
esac
HI_VENV="$HI_CACHE/venv"
HI_MODELS="$HI_CACHE/models"

HI_SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

hi_log() { printf 'hybrid-inference: %s\n' "$*" >&2; }
hi_die() { printf 'hybrid-inference: error: %s\n' "$*" >&2; exit 1; }

# sha256 of a file, hex only.
hi_sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# Prints the sha256 of a string (used for stamps).
hi_sha256_str() {
    if command -v sha256sum >/dev/null 2>&1; then
        printf '%s' "$1" | sha256sum | cut -d' ' -f1
    else
        printf '%s' "$1" | shasum -a 256 | cut -d' ' -f1
    fi
}

hi_find_python() {
    local py
    for py in "${PYTHON:-}" python3 python; do
        [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 && { command -v "$py"; return 0; }
    done
    hi_die "python3 not found (install Python 3.9+)"
}

# Reads a build log on stdin and draws one updating bar on stderr from ninja's
# "[n/m]" lines. Only called when stderr is a terminal.
hi_progress_bar() {
    local label="$1" line done total filled width=30
    while IFS= read -r line; do
        [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
        done="${BASH_REMATCH[1]}"; total="${BASH_REMATCH[2]}"
        filled=$(( done * width / total ))
        printf '\rhybrid-inference: %s [%-*s] %d/%d' "$label" "$width" \
            "$(printf '%*s' "$filled" '' | tr ' ' '#')" "$done" "$total" >&2
    done
    printf '\r\033[K' >&2
}
