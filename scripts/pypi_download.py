"""Downloads one file of one release from PyPI, through its JSON API.

    pypi_download.py BASE_URL PACKAGE VERSION FILENAME DEST

Tries the release's own JSON first and the project's JSON second (some mirrors
serve only the latter). Exits 1 when the file cannot be found or fetched.
"""
import json
import shutil
import sys
import urllib.parse
import urllib.request

base, package, version, filename, dest = sys.argv[1:6]
for api in (f"{base}/pypi/{package}/{version}/json", f"{base}/pypi/{package}/json"):
    try:
        with urllib.request.urlopen(api, timeout=60) as response:
            data = json.load(response)
    except Exception:
        continue
    release_files = data.get("urls", []) if api.endswith(f"/{version}/json") else data.get("releases", {}).get(version, [])
    for entry in release_files:
        if entry.get("filename") == filename:
            url = urllib.parse.urljoin(api, entry["url"])
            with urllib.request.urlopen(url, timeout=600) as response, open(dest, "wb") as out:
                shutil.copyfileobj(response, out)
            sys.exit(0)
sys.exit(1)
