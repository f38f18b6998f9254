#!/usr/bin/env bash
# Prints what GGML_VK_VISIBLE_DEVICES should be for the GPU tests and benchmark: its value
# when set; nothing when Vulkan lists a discrete or integrated GPU (ggml's Vulkan backend
# picks those by itself); else the index of the first CPU-type device (lavapipe), which
# ggml's backend leaves out unless named. Reads `vulkaninfo --summary` (vulkan-tools).
set -euo pipefail
if [ -n "${GGML_VK_VISIBLE_DEVICES:-}" ]; then
    echo "$GGML_VK_VISIBLE_DEVICES"
    exit 0
fi
command -v vulkaninfo >/dev/null 2>&1 || exit 0
types="$(vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceType[[:space:]]*=[[:space:]]*//p')"
grep -q -e DISCRETE_GPU -e INTEGRATED_GPU <<< "$types" && exit 0
index="$(grep -n CPU <<< "$types" | head -n 1 | cut -d: -f1)"
[ -z "$index" ] || echo $((index - 1))
