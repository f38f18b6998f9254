#!/usr/bin/env bash
# The module walls (the Architecture article, "Modules and walls"), checked the
# way a user meets them:
#  1. the targets depend on what the table says, and the Jinja and core
#     targets on nothing (read from the manifest, not from this script's hopes);
#     CHybridOS, the C module of OS headers, is allowed to any target and is
#     not a wall, so it is left out of the table, and itself depends on nothing;
#     CHybridMTMD, the run-time door to libmtmd, depends on nothing and only the
#     llama.cpp target uses it;
#  2. a cloud-only app (Examples/CloudOnlyApp, product HybridInferenceCloud)
#     builds and runs where pkg-config finds no llama.cpp at all, and its build
#     never compiled the llama.cpp target.
# Run by `make test`; about 20 s warm (the app's build is cached in
# .build/cloud-only).
set -euo pipefail
cd "$(dirname "$0")/.."

expected='HybridInferenceCore:
HybridInferenceRemote:HybridInferenceCore
HybridInferenceGemini:HybridInferenceCore,HybridInferenceRemote
HybridInferenceOpenAI:HybridInferenceCore,HybridInferenceRemote
HybridInferenceJinja:
HybridInferenceDownload:HybridInferenceCore,HybridInferenceRemote
HybridInferenceLlama:CHybridMTMD,CLlama,HybridInferenceCore,HybridInferenceDownload,HybridInferenceJinja
HybridInferenceCloud:HybridInferenceCore,HybridInferenceGemini,HybridInferenceOpenAI,HybridInferenceRemote
CHybridOS:
CHybridMTMD:'
actual=$(swift package dump-package | python3 -c '
import json, sys
targets = {t["name"]: t for t in json.load(sys.stdin)["targets"]}
def deps(name):
    return sorted(d.get("byName", d.get("target", [None]))[0] for d in targets[name]["dependencies"])
for name in ["HybridInferenceCore", "HybridInferenceRemote", "HybridInferenceGemini",
             "HybridInferenceOpenAI", "HybridInferenceJinja", "HybridInferenceDownload", "HybridInferenceLlama",
             "HybridInferenceCloud"]:
    print(name + ":" + ",".join(d for d in deps(name) if d != "CHybridOS"))
print("CHybridOS:" + ",".join(deps("CHybridOS")))
print("CHybridMTMD:" + ",".join(deps("CHybridMTMD")))
')
if [ "$actual" != "$expected" ]; then
  echo "check-walls: the targets' dependencies are not the walls' (Architecture article, \"Modules and walls\"):" >&2
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  exit 1
fi

scratch=.build/cloud-only
mkdir -p .build
echo "check-walls: building Examples/CloudOnlyApp with no llama.cpp in sight (PKG_CONFIG_LIBDIR=/nonexistent)" >&2
# Two things SwiftPM (Swift 6.3) does not notice on its own in this cached build: the
# library's files added or removed (the build plan of a path dependency is kept: "missing
# inputs"), and a re-exported module that changed under the umbrella module the app
# imports (its client is not rebuilt: undefined symbols). Touching the app's manifest
# and its one source file makes it plan and compile again (seconds, not a rebuild).
touch Examples/CloudOnlyApp/Package.swift Examples/CloudOnlyApp/Sources/CloudOnlyApp/main.swift
env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR=/nonexistent LD_LIBRARY_PATH= \
  swift build --package-path Examples/CloudOnlyApp --scratch-path "$scratch" > "$scratch.log" 2>&1 \
  || { cat "$scratch.log" >&2; echo "check-walls: the cloud-only app does not build without llama.cpp" >&2; exit 1; }
if ls "$scratch"/debug/Modules/HybridInferenceLlama.swiftmodule > /dev/null 2>&1; then
  echo "check-walls: the cloud-only build compiled the llama.cpp target" >&2
  exit 1
fi
status=0
env -u LD_LIBRARY_PATH "$scratch"/debug/CloudOnlyApp > /dev/null || status=$?
if [ "$status" != 2 ]; then
  echo "check-walls: the cloud-only app did not start (exit $status; 2 is its usage line)" >&2
  exit 1
fi
echo "check-walls: walls hold (targets as the Architecture article says; cloud-only app built and ran without llama.cpp)" >&2
