#!/usr/bin/env bash
# Every test of a class that runs again through another transport (a subclass in
# Tests/ that overrides `class var transport`) is listed for that subclass too.
# XCTest's discovery on Linux lists a subclass's inherited tests only when the
# subclass declares a test of its own, and drops the class otherwise, so a twin
# could run nothing without anyone noticing. Reads `swift test list` of the
# existing build (pass the build's flags); a few seconds, run after the build.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HI_SCRIPTS/.."

listed="$(swift test list --skip-build "$@")" || hi_die "swift test list failed"
# "Subclass Base" for each class declaration followed, before the next one, by
# an override of `transport`.
pairs="$(find Tests -name '*.swift' -print0 | xargs -0 awk '
  match($0, /class [A-Za-z0-9_]+: [A-Za-z0-9_]+/) {
    split(substr($0, RSTART + 6, RLENGTH - 6), names, ": "); subclass = names[1]; base = names[2]
  }
  /override class var transport/ && subclass != "" { print subclass, base; subclass = "" }
')"
[ -n "$pairs" ] || hi_die "no class overrides transport in Tests/"
tests_of() { sed -n "s|^[A-Za-z0-9_]*\\.$1/||p" <<< "$listed" | sort -u; }
classes=0 tests=0
while read -r subclass base; do
  base_tests="$(tests_of "$base")"
  [ -n "$base_tests" ] || hi_die "$base lists no tests"
  missing="$(comm -23 <(printf '%s\n' "$base_tests") <(tests_of "$subclass"))"
  [ -z "$missing" ] || hi_die "$subclass does not run these tests of $base (does it declare a test of its own?): $(tr '\n' ' ' <<< "$missing")"
  classes=$((classes + 1)) tests=$((tests + $(wc -l <<< "$base_tests")))
done <<< "$pairs"
hi_log "check-transport-twins: $tests tests of $classes classes run through both transports"
