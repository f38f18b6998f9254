#!/usr/bin/env bash
# The fuzz targets' entry files (Fuzz/*.swift) type-checked against the debug
# build's modules, so that `make test` notices when the library's API moves
# under them (`make fuzz` builds them only when someone fuzzes: a renamed
# parameter once broke a target unnoticed). A few seconds; run after the build.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HI_SCRIPTS/.."
bin="$(swift build --show-bin-path "$@")"
for entry in Fuzz/*.swift; do
  swiftc -typecheck -parse-as-library -package-name HybridInference -I "$bin/Modules" -I Sources/CLlama \
    -I Sources/CHybridOS/include -I Sources/CHybridMTMD/include -Xcc -I"$LLAMA_PREFIX/include" "$entry" \
    || hi_die "fuzz entry $entry does not type-check against the library"
done
echo "check-fuzz-entries: $(ls Fuzz/*.swift | wc -l) fuzz entries type-check" >&2
