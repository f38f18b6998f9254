#!/usr/bin/env bash
# `make test-gpu`: the GPUTests suite against llama.cpp's Vulkan build. Sets that build up
# (LLAMA_GPU=vulkan: a prefix of its own, the CPU build untouched), builds the package
# against it into a build dir of its own (.build-gpu), and runs the suite on the Vulkan
# device ggml picks; on a machine whose only Vulkan device is a CPU one (lavapipe), on that.
#   scripts/test-gpu.sh [extra swift test arguments]
set -euo pipefail
export LLAMA_GPU=vulkan
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$HI_SCRIPTS/setup.sh" --default-model

export PKG_CONFIG_PATH="$LLAMA_PREFIX/lib/pkgconfig"
export LD_LIBRARY_PATH="$LLAMA_PREFIX/lib"
export HYBRID_TEST_TINY_MODEL="${HYBRID_TEST_TINY_MODEL:-$HI_MODELS/tiny-random-llama.gguf}"
link=(-Xlinker -rpath -Xlinker "$LLAMA_PREFIX/lib")
cd "$HI_SCRIPTS/.."
swift build --build-tests --scratch-path .build-gpu "${link[@]}"

# lavapipe, on a machine without a GPU (see the script).
devices="$("$HI_SCRIPTS/vulkan-visible-devices.sh")"
[ -z "$devices" ] || export GGML_VK_VISIBLE_DEVICES="$devices"
hi_log "Vulkan device: ${GGML_VK_VISIBLE_DEVICES:+GGML_VK_VISIBLE_DEVICES=$GGML_VK_VISIBLE_DEVICES, }$(
    vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceName[[:space:]]*=[[:space:]]*//p' | paste -sd, - || echo unknown)"

HYBRID_TEST_GPU=1 HYBRID_REQUIRE_PREREQUISITES=1 \
    swift test --skip-build --scratch-path .build-gpu "${link[@]}" --filter 'HybridInferenceTests.GPUTests' "$@"
