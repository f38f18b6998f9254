#!/usr/bin/env bash
# One-shot provisioning: Python tools venv, llama.cpp build (and the chat-parse reference),
# tiny test models (text, and text with a vision projector), Llama 3 vocabulary.
#   scripts/setup.sh [--default-model]
# --default-model also fetches SmolLM2-135M-Instruct (~94 MiB). Silent on a full cache hit.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

default_model=0
for arg in "$@"; do
    case "$arg" in
        --default-model) default_model=1 ;;
        -h|--help) sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) hi_die "unknown argument: $arg (usage: scripts/setup.sh [--default-model])" ;;
    esac
done

"$HI_SCRIPTS/setup-python.sh"
"$HI_SCRIPTS/setup-llama.sh"
# Built with the server; here for a prefix made before it (a no-op when its stamp matches).
"$HI_SCRIPTS/build-chat-parse-reference.sh"
"$HI_SCRIPTS/make-tiny-model.sh" >/dev/null
"$HI_SCRIPTS/make-tiny-vision-model.sh" >/dev/null
"$HI_SCRIPTS/fetch-vocab.sh" >/dev/null
if [ "$default_model" = 1 ]; then
    "$HI_SCRIPTS/fetch-default-model.sh" >/dev/null
fi
