#!/usr/bin/env python3
"""A Gemini-protocol server on loopback, for the cloud client's tests.

Python standard library only. Started by the tests (and the benchmark):

    python3 gemini_server.py [--api-key KEY] [--fixtures DIR]

It binds 127.0.0.1 on a free port, prints the port on the first line of
stdout, and serves until its stdin closes (so it never outlives the process
that started it) or it is killed.

Requests are validated like Google does: the path
(/{version}/models/{model}:generateContent | :streamGenerateContent?alt=sse |
:countTokens, or Vertex AI's /v1/projects/{p}/locations/{l}/publishers/google/
models/{model}:...), the method, the credential, and the JSON body (an unknown
field is a 400 INVALID_ARGUMENT).

Credentials: the Gemini API path takes the x-goog-api-key header (a key in the
URL is refused) or a valid bearer token; the Vertex path takes only a valid
bearer token (an API key is a 401, as on Vertex) and wants x-goog-user-project
equal to the path's project. A bearer token is valid when it starts with
`ya29.valid`; any other is a 401 UNAUTHENTICATED (so a provider that first
returns a stale token and then a fresh one sees one refresh).

The metadata server: GET /computeMetadata/v1/instance/service-accounts/default/token
with Metadata-Flavor: Google answers {"access_token": "ya29.valid-meta-N",
"expires_in": E, "token_type": "Bearer"} (N counts the fetches; without the
header, a 403). GET /_metadata?expires_in=E&status=S sets E (default 3600; a
negative E leaves expires_in out) and makes every later fetch answer S instead
when S is not 200.

The model name picks the behaviour. `~`-separated options follow it:

    fixture-<file>       replay googleai/<file>.json, .txt (or <file> itself),
                         from --fixtures (Tests/Fixtures/gemini-recorded by
                         default), else from Tests/Fixtures/gemini
    echo                 answer "echo: <last user text>" (3 events when streamed); media parts
                         of that turn show as [image/png, 3 bytes] or [video/mp4 at URI]
    tools                function calling (gemini_tools.py): calls the first declared
                         function (`calls-N` at once, for `rounds-N` rounds), then
                         answers "done: <outputs>"; every request's declarations,
                         toolConfig, calls, ids and thought signatures are checked
    grounded             server-side tools (gemini_grounding.py): 400 unless the request
                         declares googleSearch, codeExecution or urlContext; answers with
                         code-execution parts, groundingMetadata and urlContextMetadata
    json                 structured output: 400 unless generationConfig has
                         responseMimeType application/json and a responseJsonSchema,
                         else a value satisfying the schema (3 events when streamed)
    fault-429            `times` x 429 with RetryInfo `retry` (default 0.2s; `none`: no
                         RetryInfo), then echo
    fault-429-per-day    429 with a per-day QuotaFailure, always
    fault-500, fault-503 `times` x that status, then echo
    fault-400            400 INVALID_ARGUMENT, always
    fault-html-502       `times` x an HTML 502 page (default: always), then echo
    fault-reset-before   `times` x a TCP reset once the whole request was read,
                         before any byte of the response, then echo (countTokens too)
    fault-close-before   `times` x a clean close at the same point, then echo (countTokens too)
    fault-reset-mid      first event (or half the body), then a TCP reset
    fault-truncated      first event, then half an event, then a clean end
    fault-unfinished     an echo answer with no finishReason, its body framed and
                         ended as `body` says: whole (`chunked`, the default;
                         `length`; `close`: delimited by a clean close) or cut
                         at the transport (`chunked-cut`: closed before the last
                         chunk; `length-cut`: closed short of its Content-Length;
                         `reset`); streamed, `events` events (default 3 whole,
                         2 cut), unary a cut body is its first half
    fault-hostile-error  400 whose status and 100 KB message carry terminal escapes,
                         C1 controls and line breaks
    fault-malformed      a 200 whose JSON does not parse
    fault-empty          a 200 with an empty body
    fault-slow-body      first event (or half the body), then `delay` ms of silence
    fault-slow-head      `delay` ms before anything is sent
    fault-stream-error   first event, then a bare JSON error object in the stream
    fault-stream-error-data  first event, then `data: {"error": ...}`
    fault-stream-error-inline  first event, then one event holding a data line
                         and a bare JSON error line (no blank line between)
    fault-huge           one answer of `size` bytes of text (default 1 MiB): a
                         single SSE event, or a unary body, in 64 KiB writes;
                         with chunk-N, framed in chunks of N bytes
    fault-endless        a 200 whose body goes on for 64 MiB (no line break, ever),
                         or until the client hangs up
    fault-flood          streamed: valid events without end, `rate` a second (default 0: as
                         fast as the socket takes them) of `size` bytes of text each
                         (default 1024), until `cap` bytes (default 64 MiB) or the
                         client hangs up
    fault-echo-key       400 whose message quotes the key it received
    redirect-307, redirect-308, redirect-301, redirect-302
                         that status, Location: the same method of `echo` on
                         this server, or with port-N on 127.0.0.1:N

A request whose contents end with a model turn is refused (400), as Gemini does.

Options: first-<ms> (wait before answering; with tail-<ms> and tailpct-<percent>,
that share of requests waits `tail` instead, drawn per model and request
number: a heavy-tailed latency), times-N, retry-<duration>, size-N, rate-N, cap-N, events-N, body-<framing>, delay-<ms> (between events, or of the
stall), gap-<ms> (before the second event only), id-<anything> (a separate
counter), stamp-1 (echo events carry their send time, in Unix nanoseconds,
as responseId: for measuring delivery delay).

GET /_blackhole returns {"port": N}, a loopback port where connecting hangs
(its accept queue is full). GET /_stats?model=M returns {"count": requests
for M, "writing": endless or flood bodies for M still being written}; GET /_last?model=M returns the last request for M (path, headers
without the key and Authorization, body, the bearer token it carried); GET /_all?model=M every request
for M, in order. Metadata token fetches count as model `_metadata`. Every response carries x-test-request-count.
"""

import argparse
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.dont_write_bytecode = True  # keep the source tree clean

from gemini_behaviours import Behaviours  # noqa: E402
from gemini_wire import (COUNT_FIELDS, PATH, VERTEX_COUNT_FIELDS, VERTEX_PATH,  # noqa: E402
                         BadRequest, check_contents, check_fields, check_generate, error_body,
                         parse_model)

METADATA_TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"


class ServerState:
    def __init__(self, api_key, fixtures):
        self.api_key = api_key
        self.fixtures = fixtures
        self.lock = threading.Lock()
        self.counts = {}
        self.writing = {}
        self.last = {}
        self.every = {}
        self.blackhole = None
        self.metadata = {"expires_in": 3600, "status": 200}

    def blackhole_port(self):
        """A loopback port whose accept queue is full: the kernel drops new
        SYNs, so connecting hangs, as it does to an unreachable host."""
        with self.lock:
            if self.blackhole is None:
                listener = socket.socket()
                listener.bind(("127.0.0.1", 0))
                listener.listen(0)
                fillers = []
                for _ in range(3):
                    filler = socket.socket()
                    filler.setblocking(False)
                    try:
                        filler.connect(listener.getsockname())
                    except BlockingIOError:
                        pass
                    fillers.append(filler)
                time.sleep(0.1)
                self.blackhole = (listener, fillers)
            return self.blackhole[0].getsockname()[1]

    def record(self, model, entry):
        with self.lock:
            self.counts[model] = self.counts.get(model, 0) + 1
            self.last[model] = entry
            self.every.setdefault(model, []).append(entry)
            return self.counts[model]


class Handler(Behaviours, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "GeminiTestServer/1"
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle
    # and the client's delayed ACK add 40 ms to every reused-connection reply.
    disable_nagle_algorithm = True

    def log_message(self, format, *args):
        if os.environ.get("GEMINI_SERVER_VERBOSE"):
            super().log_message(format, *args)

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ValueError, OSError):
            self.close_connection = True

    def finish(self):
        try:
            super().finish()
        except (ValueError, OSError):
            pass

    @property
    def state(self):
        return self.server.state

    # -- plumbing --------------------------------------------------------

    def send_body(self, code, body, content_type="application/json; charset=UTF-8", count=None):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if count is not None:
            self.send_header("x-test-request-count", str(count))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def send_error_json(self, code, status, message, details=None, count=None):
        self.send_body(code, error_body(code, status, message, details), count=count)

    def start_stream(self, count):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-test-request-count", str(count))
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def reset(self):
        """Ends the connection with a TCP reset (SO_LINGER 0, then close)."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        for stream in (self.rfile, self.wfile):
            try:
                stream.close()
            except (ValueError, OSError):
                pass
        self.connection.close()

    def close_quietly(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- routes ----------------------------------------------------------

    def do_GET(self):
        url = urlsplit(self.path)
        model = parse_qs(url.query).get("model", [""])[0]
        if url.path == "/_blackhole":
            return self.send_body(200, json.dumps({"port": self.state.blackhole_port()}).encode())
        if url.path == METADATA_TOKEN_PATH:
            return self.metadata_token()
        if url.path == "/_metadata":
            query = parse_qs(url.query)
            with self.state.lock:
                for key in ("expires_in", "status"):
                    if key in query:
                        self.state.metadata[key] = int(query[key][0])
            return self.send_body(200, b"{}")
        with self.state.lock:
            if url.path == "/_stats":
                return self.send_body(200, json.dumps({"count": self.state.counts.get(model, 0),
                                                       "writing": self.state.writing.get(model, 0)}).encode())
            if url.path == "/_last":
                return self.send_body(200, json.dumps(self.state.last.get(model)).encode())
            if url.path == "/_all":
                return self.send_body(200, json.dumps(self.state.every.get(model, [])).encode())
        self.send_error_json(404, "NOT_FOUND", f"GET {url.path} is not a method of this API")

    def do_PUT(self):
        self.reject_method()

    def do_DELETE(self):
        self.reject_method()

    def reject_method(self):
        self.read_body()
        self.send_error_json(405, "INVALID_ARGUMENT", f"{self.command} is not supported; use POST")

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_POST(self):
        url = urlsplit(self.path)
        raw = self.read_body()
        match = PATH.match(url.path)
        vertex = VERTEX_PATH.match(url.path)
        if match:
            _, model, method = match.groups()
            project = None
        elif vertex:
            _, project, _, model, method = vertex.groups()
        else:
            return self.send_error_json(404, "NOT_FOUND", f"The requested URL {url.path} was not found.")
        query = parse_qs(url.query)
        headers = {k.lower(): v for k, v in self.headers.items()
                   if k.lower() not in ("x-goog-api-key", "authorization")}
        authorization = self.headers.get("Authorization") or ""
        bearer = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        count = self.state.record(model, {"path": url.path, "query": url.query, "method": method,
                                          "headers": headers, "body": body, "bearer": bearer,
                                          "vertex": vertex is not None,
                                          "keyHeaderPresent": "x-goog-api-key" in self.headers})
        try:
            if "key" in query:
                raise BadRequest("this test server refuses API keys in the URL")
            name, options = parse_model(model)
            if name == "fault-echo-key":
                received = self.headers.get("x-goog-api-key", "") + (bearer or "")
                raise BadRequest(f"API key not valid: {received}")
            refusal = self.check_credential(vertex is not None, project, bearer)
            if refusal:
                return self.send_error_json(*refusal, count=count)
            if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                raise BadRequest("Content-Type must be application/json")
            if body is None:
                raise BadRequest("Invalid JSON payload received.")
            if method == "streamGenerateContent" and query.get("alt") != ["sse"]:
                raise BadRequest("this test server streams only with alt=sse")
            if method == "countTokens" and vertex:
                check_fields(body, VERTEX_COUNT_FIELDS, "request")
                check_contents(body.get("contents"), "request.contents")
                if "systemInstruction" in body:
                    check_fields(body["systemInstruction"], {"role", "parts"}, "request.system_instruction")
                return self.count_tokens(body, count)
            if method == "countTokens":
                check_fields(body, COUNT_FIELDS, "request")
                if ("contents" in body) == ("generateContentRequest" in body):
                    raise BadRequest("exactly one of contents and generateContentRequest must be set")
                if "contents" in body:
                    check_contents(body["contents"], "request.contents")
                else:
                    check_generate(body["generateContentRequest"], "request.generate_content_request")
                if name in ("fault-reset-before", "fault-close-before") and count <= int(options.get("times", "1")):
                    return self.reset() if name == "fault-reset-before" else self.close_quietly()
                return self.count_tokens(body, count)
            check_generate(body)
        except BadRequest as error:
            return self.send_error_json(error.code, error.status, error.message, count=count)
        self.serve(name, options, model, body, method == "streamGenerateContent", count, method)

    def check_credential(self, vertex, project, bearer):
        """None when the request may go on, else (code, status, message, details)."""
        key = self.headers.get("x-goog-api-key")
        if bearer is not None:
            if not bearer.startswith("ya29.valid"):
                return (401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 "
                        "access token, login cookie or other valid authentication credential.", None)
            if vertex and self.headers.get("x-goog-user-project") != project:
                return (403, "PERMISSION_DENIED", "x-goog-user-project must name the project of the path", None)
            return None
        if vertex:
            return (401, "UNAUTHENTICATED", "API keys are not supported by this API. Expected OAuth2 access token "
                    "or other authentication credentials that assert a principal.", None)
        if key != self.state.api_key:
            return (400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                 "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}])
        return None

    def metadata_token(self):
        if self.headers.get("Metadata-Flavor") != "Google":
            return self.send_body(403, b"Missing Metadata-Flavor:Google header.", "text/html; charset=UTF-8")
        count = self.state.record("_metadata", {"path": self.path, "headers": dict(self.headers.items())})
        with self.state.lock:
            settings = dict(self.state.metadata)
        if settings["status"] != 200:
            return self.send_body(settings["status"], b"metadata server failure", "text/plain", count=count)
        token = {"access_token": f"ya29.valid-meta-{count}", "expires_in": settings["expires_in"],
                 "token_type": "Bearer"}
        if settings["expires_in"] < 0:  # a negative setting: no expires_in at all
            del token["expires_in"]
        self.send_body(200, json.dumps(token).encode(), count=count)

    def count_tokens(self, body, count):
        inner = body.get("generateContentRequest", body)
        words, images = 0, 0
        for content in inner.get("contents", []) + ([inner["systemInstruction"]] if "systemInstruction" in inner else []):
            for part in content.get("parts", []):
                words += len(part.get("text", "").split())
                images += 1 if "inlineData" in part or "fileData" in part else 0
        # Gemini counts a small image as 258 tokens; every media part is one here.
        details = [{"modality": "TEXT", "tokenCount": words}] + (
            [{"modality": "IMAGE", "tokenCount": 258 * images}] if images else [])
        self.send_body(200, json.dumps({"totalTokens": words + 258 * images,
                                        "promptTokensDetails": details}).encode(), count=count)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        # Clients that hang up mid-answer are what the fault tests do.
        if os.environ.get("GEMINI_SERVER_VERBOSE"):
            super().handle_error(request, client_address)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_fixtures = os.environ.get("HYBRID_GEMINI_FIXTURES") or os.path.join(
        here, "..", "Fixtures", "gemini-recorded")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-key", default="test-api-key")
    parser.add_argument("--fixtures", default=default_fixtures)
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    server = Server(("127.0.0.1", arguments.port), Handler)
    server.state = ServerState(arguments.api_key, os.path.abspath(arguments.fixtures))
    print(server.server_address[1], flush=True)

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    main()
