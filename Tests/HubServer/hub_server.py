#!/usr/bin/env python3
"""A Hugging Face hub and its CDN on loopback, for the model downloader's tests.

Python standard library only. Started by the tests:

    python3 hub_server.py --file PATH [--token TOKEN]

It binds two free ports on 127.0.0.1, the hub (P1) and the CDN (P2), prints
`P1 P2` on the first line of stdout, and serves until its stdin closes (so it
never outlives the process that started it) or it is killed. Both speak
HTTP/1.1 with keep-alive. Every repository serves the bytes of --file, whatever
file name is asked for.

The hub answers GET and HEAD /{org}/{name}/resolve/{revision}/{path} as
huggingface.co does for an LFS file, which is what huggingface_hub's
`get_hf_file_metadata` reads (a HEAD that follows only relative redirects):
302, Location: http://127.0.0.1:P2/lfs/{org}/{name}/{path}?sig=... (another
origin), X-Repo-Commit (40 hex digits, stable per repository and file version;
a 40-hex revision is answered as that commit), X-Linked-Etag: "<sha256 of the
bytes>", X-Linked-Size, ETag: "<git oid of the LFS pointer>", Content-Length: 0.
The revision is one path segment, percent-encoded (refs%2Fpr%2F1);
refs/heads/X means X.

The CDN answers GET and HEAD of /lfs/... (where the hub points) and of
/files/{name}/{filename} (a plain URL, no hub in between; its repository is
`files/{name}`): 200 with Content-Length, ETag: "<sha256>", Accept-Ranges:
bytes, Last-Modified; Range: bytes=N-, N-M or -K gives 206 with Content-Range
(416 past the end; several ranges are answered whole); If-Range that is not
the current ETag (or Last-Modified) gives 200 and the whole file. /lfs/ with an
Authorization header is a 400, as a signed S3 URL is: the token is the hub's,
never the CDN's.

Words of the repository's name (split at `-` and `_`) pick the behaviour, and
combine (private-drop40-<uuid>); state is per repository:

    private           the hub wants `Authorization: Bearer <token>`, else 401 with
                      X-Error-Code: RepoNotFound and a JSON error; on /files/ the
                      CDN wants it instead
    missing           404 (X-Error-Code: RepoNotFound), hub and /files/
    drop40            the first CDN GET sends its whole head, then 40% of its body,
                      then a clean close; later GETs are whole
    norange           the CDN ignores Range and If-Range: 200 and the whole file,
                      no Accept-Ranges
    changing          like drop40, and once that first GET is cut the file is
                      version 2 (its last byte xor 0xFF): new X-Repo-Commit,
                      X-Linked-Etag, ETag and bytes, so If-Range: <v1 ETag> gets
                      200 and the whole of version 2
    wrongbytes        the CDN serves the file with its last byte flipped; the hub
                      and the CDN's ETag give the true sha256
    redirectloop      the hub answers 302 to its own absolute URL, forever
    redirectexternal  the hub's 302 (metadata headers and all) points at
                      http://203.0.113.5/x, plain http off loopback
    lyinglength       the CDN's Content-Length is 1000 too many, and 1000 zero
                      bytes follow the body
    endless           the CDN sends no Content-Length (Connection: close): the
                      file, then zeros until the client hangs up (or 256 MiB more)
    badrange          a Range request gets 206 whose Content-Range (and body)
                      starts at 0 whatever was asked
    slow              the CDN sends 64 KiB every 100 ms
    redirectrelative  the hub answers a revision not spelled refs/... with a
                      relative 307 to /{org}/{name}/resolve/refs%2Fheads%2F<rev>/...
                      (no metadata), which gets the normal 302

GET /_stats/{org}/{name} (either origin) returns that repository's record:
{"hub_requests": [{method, path, revision, status, authorization}],
"cdn_requests": [{method, path, range, if_range, status, bytes_sent,
complete}], "cdn_bytes_sent", "cdn_authorization_seen",
"hub_authorization_seen", "version", "cdn_in_flight"}. bytes_sent counts body
bytes whose write to the socket completed. It first waits (up to 1 s) for the
repository's CDN answers still being written, so a client that has read a
whole body sees it counted.
"""

import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

sys.dont_write_bytecode = True  # keep the source tree clean

CHUNK = 64 * 1024
ENDLESS_CAP = 256 * 1024 * 1024
EXTERNAL_LOCATION = "http://203.0.113.5/x"
LAST_MODIFIED = {1: "Mon, 01 Jan 2024 00:00:00 GMT", 2: "Tue, 02 Jan 2024 00:00:00 GMT"}
COMMIT_PATTERN = re.compile(r"^[0-9a-f]{40}$")


class Content:
    """The served bytes in both versions, with their digests."""

    def __init__(self, data):
        if not data:
            raise SystemExit("hub_server.py: --file is empty")
        flipped = data[:-1] + bytes([data[-1] ^ 0xFF])
        self.bytes = {1: data, 2: flipped}
        self.sha256 = {v: hashlib.sha256(b).hexdigest() for v, b in self.bytes.items()}
        self.size = len(data)

    def pointer_oid(self, version):
        """The git blob id of the file's LFS pointer: the hub's own ETag."""
        pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256[version]}\n"
                   f"size {self.size}\n").encode()
        return hashlib.sha1(b"blob %d\0" % len(pointer) + pointer).hexdigest()


class Repository:
    """What one repository (or /files/ name) has seen; guarded by State.lock."""

    def __init__(self, name):
        self.words = set(re.split(r"[-_]", name.lower()))
        self.version = 1
        self.cdn_gets = 0
        self.hub_requests = []
        self.cdn_requests = []
        self.hub_authorization_seen = False
        self.cdn_authorization_seen = False

    def commit(self, key):
        return hashlib.sha1(f"commit\0{key}\0{self.version}".encode()).hexdigest()

    def record(self):
        in_flight = sum(1 for r in self.cdn_requests if not r["complete"])
        return {
            "hub_requests": list(self.hub_requests),
            "cdn_requests": [dict(r) for r in self.cdn_requests],
            "cdn_bytes_sent": sum(r["bytes_sent"] for r in self.cdn_requests),
            "cdn_authorization_seen": self.cdn_authorization_seen,
            "hub_authorization_seen": self.hub_authorization_seen,
            "version": self.version,
            "cdn_in_flight": in_flight,
        }


class State:
    def __init__(self, content, token):
        self.content = content
        self.token = token
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.repositories = {}
        self.hub_origin = None
        self.cdn_origin = None

    def repository(self, key):
        """The repository `org/name`; call with the lock held."""
        if key not in self.repositories:
            self.repositories[key] = Repository(key.rsplit("/", 1)[-1])
        return self.repositories[key]

    def stats(self, key):
        deadline = time.monotonic() + 1
        with self.changed:
            repository = self.repository(key)
            while any(not r["complete"] for r in repository.cdn_requests):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.changed.wait(left)
            return repository.record()


def parse_range(header, size):
    """(start, end inclusive) of a single-range `bytes=` header, "unsatisfiable",
    or None where the header is to be ignored (absent, malformed, several ranges)."""
    match = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header or "")
    if not match or (match.group(1) == "" and match.group(2) == ""):
        return None
    first, last = match.group(1), match.group(2)
    if first == "":
        suffix = int(last)
        if suffix == 0:
            return "unsatisfiable"
        return (max(0, size - suffix), size - 1)
    start = int(first)
    end = size - 1 if last == "" else min(int(last), size - 1)
    if start >= size:
        return "unsatisfiable"
    if end < start:
        return None
    return (start, end)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        if os.environ.get("HUB_SERVER_VERBOSE"):
            super().log_message(format, *args)

    @property
    def state(self):
        return self.server.state

    def do_HEAD(self):
        self.dispatch()

    def do_GET(self):
        self.dispatch()

    def dispatch(self):
        raw = urlsplit(self.path).path
        segments = raw.split("/")[1:]
        if len(segments) == 3 and segments[0] == "_stats" and self.command == "GET":
            key = unquote(segments[1]) + "/" + unquote(segments[2])
            return self.answer(200, json.dumps(self.state.stats(key)).encode(), "application/json")
        if self.server.role == "hub":
            if len(segments) >= 5 and segments[2] == "resolve":
                return self.hub(segments)
        elif len(segments) >= 4 and segments[0] == "lfs":
            return self.cdn(unquote(segments[1]) + "/" + unquote(segments[2]), signed=True)
        elif len(segments) == 3 and segments[0] == "files":
            return self.cdn("files/" + unquote(segments[1]), signed=False)
        self.error(404, "no such route", None)

    # The hub.

    def hub(self, segments):
        org, name, revision = (unquote(s) for s in segments[:2] + segments[3:4])
        key = f"{org}/{name}"
        path = "/".join(segments[4:])
        authorization = self.headers.get("Authorization")
        state = self.state
        with state.lock:
            repository = state.repository(key)
            words = repository.words
            repository.hub_authorization_seen |= authorization is not None
            entry = {"method": self.command, "path": self.path, "revision": revision, "status": 0,
                     "authorization": authorization is not None}
            repository.hub_requests.append(entry)
            version = repository.version
            commit = revision if COMMIT_PATTERN.match(revision) else repository.commit(key)

        def status(code):
            with state.lock:
                entry["status"] = code

        if "private" in words and authorization != f"Bearer {state.token}":
            status(401)
            return self.error(401, "Invalid username or password.", "RepoNotFound")
        if "missing" in words:
            status(404)
            return self.error(404, "Repository not found", "RepoNotFound")
        if "redirectloop" in words:
            status(302)
            return self.redirect(302, state.hub_origin + self.path, {})
        if "redirectrelative" in words and not revision.startswith("refs/"):
            status(307)
            spelled = quote("refs/heads/" + revision, safe="")
            return self.redirect(307, f"/{segments[0]}/{segments[1]}/resolve/{spelled}/{path}", {})
        content = state.content
        sha = content.sha256[version]
        if "redirectexternal" in words:
            location = EXTERNAL_LOCATION
        else:
            signature = hashlib.sha1(f"{key}\0{path}\0{version}".encode()).hexdigest()
            location = f"{state.cdn_origin}/lfs/{segments[0]}/{segments[1]}/{path}?sig={signature}"
        status(302)
        self.redirect(302, location, {
            "X-Repo-Commit": commit,
            "X-Linked-Etag": f'"{sha}"',
            "X-Linked-Size": str(content.size),
            "ETag": f'"{content.pointer_oid(version)}"',
            "Accept-Ranges": "bytes",
        })

    def redirect(self, code, location, headers):
        self.send_response(code)
        self.send_header("Location", location)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    # The CDN.

    def cdn(self, key, signed):
        authorization = self.headers.get("Authorization")
        range_header = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        state = self.state
        content = state.content
        with state.lock:
            repository = state.repository(key)
            words = repository.words
            repository.cdn_authorization_seen |= authorization is not None
            entry = {"method": self.command, "path": self.path, "range": range_header, "if_range": if_range,
                     "status": 0, "bytes_sent": 0, "complete": False}
            repository.cdn_requests.append(entry)
            first_get = False
            if self.command == "GET":
                repository.cdn_gets += 1
                first_get = repository.cdn_gets == 1
            version = repository.version
        try:
            self.cdn_answer(repository, entry, words, version, first_get, signed, authorization,
                            range_header, if_range)
        finally:
            with state.changed:
                entry["complete"] = True
                state.changed.notify_all()

    def cdn_answer(self, repository, entry, words, version, first_get, signed, authorization,
                   range_header, if_range):
        state = self.state
        content = state.content

        def status(code):
            with state.lock:
                entry["status"] = code

        if signed and authorization is not None:
            status(400)
            return self.error(400, "Only one auth mechanism allowed", None)
        if not signed and "private" in words and authorization != f"Bearer {state.token}":
            status(401)
            return self.error(401, "Invalid username or password.", None)
        if "missing" in words:
            status(404)
            return self.error(404, "Not found", None)
        data = content.bytes[2 if "wrongbytes" in words else version]
        etag = f'"{content.sha256[version]}"'
        last_modified = LAST_MODIFIED[version]
        size = content.size

        if "endless" in words:
            status(200)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("ETag", etag)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            if self.command == "GET":
                self.send_body(entry, data, cut=None, slow=False)
                zeros = bytes(CHUNK)
                for _ in range(ENDLESS_CAP // CHUNK):
                    if not self.send_body(entry, zeros, cut=None, slow=False):
                        break
            return

        wanted = None
        if "norange" not in words and range_header is not None:
            wanted = parse_range(range_header, size)
            if wanted is not None and if_range is not None and if_range not in (etag, last_modified):
                wanted = None
        if wanted == "unsatisfiable":
            status(416)
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if wanted is None:
            code, start, end = 200, 0, size - 1
        else:
            code, (start, end) = 206, wanted
            if "badrange" in words:
                start, end = 0, end - start
        body = data[start:end + 1]
        padding = 1000 if "lyinglength" in words else 0
        status(code)
        self.send_response(code)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body) + padding))
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", last_modified)
        if "norange" not in words:
            self.send_header("Accept-Ranges", "bytes")
        if code == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if self.command != "GET":
            return
        cut = None
        if first_get and ("drop40" in words or "changing" in words):
            cut = len(body) * 40 // 100
        self.send_body(entry, body + bytes(padding), cut=cut, slow="slow" in words)
        if cut is not None:
            with state.lock:
                if "changing" in words:
                    repository.version = 2
            self.close_connection = True

    def send_body(self, entry, body, cut, slow):
        """Writes `body` (its first `cut` bytes when given) in 64 KiB writes,
        counting each completed write; False once the client has gone."""
        limit = len(body) if cut is None else cut
        offset = 0
        view = memoryview(body)
        while offset < limit:
            piece = view[offset:min(offset + CHUNK, limit)]
            try:
                self.wfile.write(piece)
            except OSError:
                self.close_connection = True
                return False
            offset += len(piece)
            with self.state.lock:
                entry["bytes_sent"] += len(piece)
            if slow and offset < limit:
                time.sleep(0.1)
        return True

    def error(self, code, message, error_code):
        self.answer(code, json.dumps({"error": message}).encode(), "application/json",
                    {"X-Error-Code": error_code, "X-Error-Message": message} if error_code else {})

    def answer(self, code, body, content_type, headers=None):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        # Clients that hang up mid-answer are what the fault tests do.
        if os.environ.get("HUB_SERVER_VERBOSE"):
            super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True)
    parser.add_argument("--token", default="hf_test_token")
    arguments = parser.parse_args()
    with open(arguments.file, "rb") as handle:
        state = State(Content(handle.read()), arguments.token)
    servers = []
    for role in ("hub", "cdn"):
        server = Server(("127.0.0.1", 0), Handler)
        server.role = role
        server.state = state
        servers.append(server)
    state.hub_origin = f"http://127.0.0.1:{servers[0].server_address[1]}"
    state.cdn_origin = f"http://127.0.0.1:{servers[1].server_address[1]}"
    print(servers[0].server_address[1], servers[1].server_address[1], flush=True)
    for server in servers:
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except OSError:
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
