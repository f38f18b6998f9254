#!/usr/bin/env bash
# `make docs`: the DocC catalog Sources/HybridInference/HybridInference.docc built
# against the public API with the toolchain's own docc (no plugin), warnings as errors,
# into .build/docs/HybridInference.doccarchive.
#   scripts/docs.sh [swift build arguments]
#
# The symbol graph is extracted from the debug build's modules with
# swift-symbolgraph-extract, not emitted by `swift build -Xswiftc -emit-symbol-graph`:
# extra compiler flags are a different build configuration, so that would rebuild the
# library (18 s on 2 cores) and the next plain `swift build` would rebuild it again;
# extracting from .build/debug takes under a second and rebuilds nothing.
#
# `HybridInference` is an umbrella: its sources only `@_exported import` the targets
# that hold the code. The extractor's -experimental-allowed-reexported-modules takes
# the symbols of those modules into the umbrella's graph, so the catalog documents one
# module, `HybridInference`, the name apps import, and ``LocalSystemModel`` resolves
# from any article whichever target declares it.
#
# Every public declaration must have a doc comment: a symbol with a source location
# (not synthesized, such as `hashValue`) and none fails the build, naming it.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HI_SCRIPTS/.."

export PKG_CONFIG_PATH="$LLAMA_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
module=HybridInference
catalog="Sources/$module/$module.docc"
out=.build/docs
graphs="$out/symbol-graphs"

swift_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
docc="${DOCC:-$swift_bin/docc}"
extract="$swift_bin/swift-symbolgraph-extract"
[ -x "$docc" ] || hi_die "docc not found beside swift ($docc); set DOCC"
[ -x "$extract" ] || hi_die "swift-symbolgraph-extract not found beside swift ($extract)"

# The same debug build `make build` and `make test` use: nothing to do when it is up to
# date. The arguments are that build's own (make passes its -Xlinker rpath): a library
# target ignores them, but a build with other flags makes the next one relink every
# executable and the test bundle.
swift build --target "$module" "$@"
bin="$(swift build --show-bin-path "$@")"
triple="$(basename "$(dirname "$bin")")"

# The modules the umbrella re-exports, read from its sources.
reexported="$(find "Sources/$module" -maxdepth 1 -name '*.swift' -exec \
    sed -n 's/^@_exported import \([A-Za-z0-9_]*\).*/\1/p' {} + | sort -u | paste -sd, -)"

rm -rf "$graphs"
mkdir -p "$graphs"
# CLlama's module map and llama.h, as the build passes them, for the modules that import it;
# CHybridOS's and CHybridMTMD's module maps are in their include folders.
cflags=()
for flag in $(pkg-config --cflags-only-I llama 2>/dev/null); do cflags+=(-Xcc "$flag"); done
"$extract" -module-name "$module" -target "$triple" \
    -I "$bin/Modules" -I "$bin" -I Sources/CHybridOS/include -I Sources/CHybridMTMD/include \
    -Xcc "-fmodule-map-file=$PWD/Sources/CLlama/module.modulemap" "${cflags[@]}" \
    -minimum-access-level public \
    ${reexported:+"-experimental-allowed-reexported-modules=$reexported"} \
    -output-dir "$graphs"

"$(hi_find_python)" - "$graphs" <<'PY'
import json, os, sys
undocumented = []
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name)) as file:
        graph = json.load(file)
    for symbol in graph["symbols"]:
        if "location" in symbol and not symbol.get("docComment"):
            location = symbol["location"]
            undocumented.append("%s:%d: %s" % (
                location["uri"].removeprefix("file://"), location["position"]["line"] + 1,
                "/".join(symbol["pathComponents"])))
for line in undocumented:
    print("error: public symbol without documentation: " + line, file=sys.stderr)
sys.exit(1 if undocumented else 0)
PY

"$docc" convert "$catalog" \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.hybrid-inference.$module" \
    --warnings-as-errors \
    --output-path "$out/$module.doccarchive"
hi_log "documentation in $out/$module.doccarchive (static hosting layout: serve the folder, open /documentation/hybridinference)"
