#!/usr/bin/env python3
"""huggingface_hub as the reference client of the hub and its cache layout.

Run with the set-up's venv (scripts/setup-python.sh pins huggingface_hub):

    python hf_reference.py download --repo ORG/NAME --file F [--revision REV]
    python hf_reference.py lookup   --repo ORG/NAME --file F [--revision REV]

The environment says where: HF_ENDPOINT (the hub, e.g. the loopback
hub_server.py), HF_HUB_CACHE (the cache), HF_TOKEN (sent when set; a token
stored in the user's huggingface folder never is).

download: hf_hub_download; prints the local path (the snapshot's link).
lookup: offline, both of huggingface_hub's cache readers
(try_to_load_from_cache and hf_hub_download(local_files_only=True)) must
find the file; prints its path, or exits 3 when it is not cached.

Any other failure prints `<ExceptionClass>: <message>` on stderr and exits 1.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")

NOT_CACHED = 3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["download", "lookup"])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--revision", default="main")
    arguments = parser.parse_args()

    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    cache = os.environ.get("HF_HUB_CACHE") or None
    token = os.environ.get("HF_TOKEN") or False
    try:
        if arguments.command == "download":
            path = huggingface_hub.hf_hub_download(
                arguments.repo, arguments.file, revision=arguments.revision, cache_dir=cache, token=token)
        else:
            found = huggingface_hub.try_to_load_from_cache(
                arguments.repo, arguments.file, cache_dir=cache, revision=arguments.revision)
            try:
                offline = huggingface_hub.hf_hub_download(
                    arguments.repo, arguments.file, revision=arguments.revision, cache_dir=cache,
                    local_files_only=True)
            except LocalEntryNotFoundError:
                offline = None
            if not isinstance(found, str) and offline is None:
                return NOT_CACHED
            if found != offline:
                print(f"CacheReadersDisagree: try_to_load_from_cache found {found!r}, "
                      f"hf_hub_download(local_files_only=True) found {offline!r}", file=sys.stderr)
                return 1
            path = found
    except Exception as error:  # the tests read the class name
        print(f"{type(error).__name__}: {error}".splitlines()[0], file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
