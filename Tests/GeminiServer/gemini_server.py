#!/usr/bin/env python3
"""A Gemini-protocol server on loopback, for the cloud client's tests.

Python standard library only. Started by the tests (and the benchmark):

    python3 gemini_server.py [--api-key KEY] [--fixtures DIR]

It binds 127.0.0.1 on a free port, prints the port on the first line of
stdout, and serves until its stdin closes (so it never outlives the process
that started it) or it is killed.

Requests are validated like Google does: the path
(/{version}/models/{model}:generateContent | :streamGenerateContent?alt=sse |
:countTokens), the method, the x-goog-api-key header (a key in the URL is
refused), and the JSON body (an unknown field is a 400 INVALID_ARGUMENT).

The model name picks the behaviour. `~`-separated options follow it:

    fixture-<file>       replay googleai/<file>.json, .txt (or <file> itself)
    echo                 answer "echo: <last user text>" (3 events when streamed)
    fault-429            `times` x 429 with RetryInfo `retry` (default 0.2s), then echo
    fault-429-per-day    429 with a per-day QuotaFailure, always
    fault-500, fault-503 `times` x that status, then echo
    fault-400            400 INVALID_ARGUMENT, always
    fault-html-502       `times` x an HTML 502 page (default: always), then echo
    fault-reset-before   `times` x a TCP reset before any byte, then echo
    fault-close-before   `times` x a clean close before any byte, then echo
    fault-reset-mid      first event (or half the body), then a TCP reset
    fault-truncated      first event, then half an event, then a clean end
    fault-malformed      a 200 whose JSON does not parse
    fault-empty          a 200 with an empty body
    fault-slow-body      first event (or half the body), then `delay` ms of silence
    fault-slow-head      `delay` ms before anything is sent
    fault-stream-error   first event, then a bare JSON error object in the stream
    fault-stream-error-data  first event, then `data: {"error": ...}`
    fault-echo-key       400 whose message quotes the key it received

Options: times-N, retry-<duration>, delay-<ms> (between events, or of the
stall), gap-<ms> (before the second event only), id-<anything> (a separate
counter). GET /_blackhole returns {"port": N}, a loopback port where
connecting hangs (its accept queue is full). GET /_stats?model=M returns {"count": requests for M}; GET
/_last?model=M returns the last request for M (path, headers without the key,
body). Every response carries x-test-request-count.
"""

import argparse
import json
import os
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PATH = re.compile(r"^/(v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$")

GENERATE_FIELDS = {"contents", "systemInstruction", "generationConfig", "safetySettings", "tools",
                   "toolConfig", "cachedContent", "model", "labels"}
COUNT_FIELDS = {"contents", "generateContentRequest"}
CONTENT_FIELDS = {"role", "parts"}
PART_FIELDS = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
               "codeExecutionResult", "thought", "thoughtSignature", "videoMetadata"}
CONFIG_FIELDS = {"temperature", "topP", "topK", "candidateCount", "maxOutputTokens", "stopSequences",
                 "presencePenalty", "frequencyPenalty", "seed", "responseMimeType", "responseSchema",
                 "responseJsonSchema", "responseModalities", "thinkingConfig", "responseLogprobs",
                 "logprobs", "speechConfig", "mediaResolution"}
THINKING_FIELDS = {"thinkingLevel", "thinkingBudget", "includeThoughts"}
THINKING_LEVELS = {"THINKING_LEVEL_UNSPECIFIED", "MINIMAL", "LOW", "MEDIUM", "HIGH"}


class ServerState:
    def __init__(self, api_key, fixtures):
        self.api_key = api_key
        self.fixtures = fixtures
        self.lock = threading.Lock()
        self.counts = {}
        self.last = {}
        self.blackhole = None

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
            return self.counts[model]


class BadRequest(Exception):
    def __init__(self, message, status="INVALID_ARGUMENT", code=400):
        super().__init__(message)
        self.message, self.status, self.code = message, status, code


def error_body(code, status, message, details=None):
    error = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return json.dumps({"error": error}, indent=2).encode()


def parse_model(model):
    name, *parts = model.split("~")
    options = {}
    for part in parts:
        key, _, value = part.partition("-")
        options[key] = value
    return name, options


def check_fields(obj, allowed, where):
    if not isinstance(obj, dict):
        raise BadRequest(f"Invalid value at '{where}': expected an object")
    for key in obj:
        if key not in allowed:
            raise BadRequest(f'Invalid JSON payload received. Unknown name "{key}" at \'{where}\': Cannot find field.')


def check_contents(contents, where):
    if not isinstance(contents, list) or not contents:
        raise BadRequest(f"* {where}: contents is not specified")
    for index, content in enumerate(contents):
        check_fields(content, CONTENT_FIELDS, f"{where}[{index}]")
        if content.get("role") not in ("user", "model"):
            raise BadRequest(f"Please use a valid role: user, model. Got {content.get('role')!r}")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise BadRequest(f"* {where}[{index}].parts: contents.parts must not be empty.")
        for part_index, part in enumerate(parts):
            check_fields(part, PART_FIELDS, f"{where}[{index}].parts[{part_index}]")


def check_generate(body, where="request"):
    check_fields(body, GENERATE_FIELDS, where)
    check_contents(body.get("contents"), f"{where}.contents")
    if "systemInstruction" in body:
        check_fields(body["systemInstruction"], CONTENT_FIELDS, f"{where}.system_instruction")
    config = body.get("generationConfig")
    if config is not None:
        check_fields(config, CONFIG_FIELDS, f"{where}.generation_config")
        thinking = config.get("thinkingConfig")
        if thinking is not None:
            check_fields(thinking, THINKING_FIELDS, f"{where}.generation_config.thinking_config")
            level = thinking.get("thinkingLevel")
            if level is not None and level not in THINKING_LEVELS:
                raise BadRequest(f"Invalid value at 'generation_config.thinking_config.thinking_level', \"{level}\"")
    for index, setting in enumerate(body.get("safetySettings") or []):
        check_fields(setting, {"category", "threshold"}, f"{where}.safety_settings[{index}]")


def last_user_text(body):
    contents = body.get("contents") or body.get("generateContentRequest", {}).get("contents") or []
    for content in reversed(contents):
        if content.get("role") == "user":
            return "".join(part.get("text", "") for part in content.get("parts", []))
    return ""


def echo_events(model, body):
    text = "echo: " + last_user_text(body)
    third = max(1, len(text) // 3)
    pieces = [text[:third], text[third:2 * third], text[2 * third:]]
    events = []
    for index, piece in enumerate(pieces):
        candidate = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
        event = {"candidates": [candidate], "modelVersion": "echo-model", "responseId": "echo-1"}
        if index == len(pieces) - 1:
            candidate["finishReason"] = "STOP"
            event["usageMetadata"] = {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 8}
        events.append(event)
    return events


def echo_unary(model, body):
    event = echo_events(model, body)
    text = "".join(e["candidates"][0]["content"]["parts"][0]["text"] for e in event)
    merged = event[-1]
    merged["candidates"][0]["content"]["parts"][0]["text"] = text
    return merged


def split_events(raw):
    """Splits an SSE body into events, each with its own bytes and separator."""
    pieces = re.split(rb"(\r\n\r\n|\n\n)", raw)
    events = []
    for index in range(0, len(pieces), 2):
        chunk = pieces[index] + (pieces[index + 1] if index + 1 < len(pieces) else b"")
        if chunk:
            events.append(chunk)
    return events


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "GeminiTestServer/1"

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
        with self.state.lock:
            if url.path == "/_stats":
                return self.send_body(200, json.dumps({"count": self.state.counts.get(model, 0)}).encode())
            if url.path == "/_last":
                return self.send_body(200, json.dumps(self.state.last.get(model)).encode())
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
        if not match:
            return self.send_error_json(404, "NOT_FOUND", f"The requested URL {url.path} was not found.")
        _, model, method = match.groups()
        query = parse_qs(url.query)
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() != "x-goog-api-key"}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        count = self.state.record(model, {"path": url.path, "query": url.query, "method": method,
                                          "headers": headers, "body": body,
                                          "keyHeaderPresent": "x-goog-api-key" in self.headers})
        try:
            if "key" in query:
                raise BadRequest("this test server refuses API keys in the URL")
            name, options = parse_model(model)
            if name == "fault-echo-key":
                received = self.headers.get("x-goog-api-key", "")
                raise BadRequest(f"API key not valid: {received}")
            if self.headers.get("x-goog-api-key") != self.state.api_key:
                return self.send_error_json(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
                    {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                     "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}],
                    count=count)
            if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                raise BadRequest("Content-Type must be application/json")
            if body is None:
                raise BadRequest("Invalid JSON payload received.")
            if method == "streamGenerateContent" and query.get("alt") != ["sse"]:
                raise BadRequest("this test server streams only with alt=sse")
            if method == "countTokens":
                check_fields(body, COUNT_FIELDS, "request")
                if ("contents" in body) == ("generateContentRequest" in body):
                    raise BadRequest("exactly one of contents and generateContentRequest must be set")
                if "contents" in body:
                    check_contents(body["contents"], "request.contents")
                else:
                    check_generate(body["generateContentRequest"], "request.generate_content_request")
                return self.count_tokens(body, count)
            check_generate(body)
        except BadRequest as error:
            return self.send_error_json(error.code, error.status, error.message, count=count)
        self.serve(name, options, model, body, method == "streamGenerateContent", count)

    def count_tokens(self, body, count):
        inner = body.get("generateContentRequest", body)
        words = 0
        for content in inner.get("contents", []) + ([inner["systemInstruction"]] if "systemInstruction" in inner else []):
            for part in content.get("parts", []):
                words += len(part.get("text", "").split())
        self.send_body(200, json.dumps({"totalTokens": words, "promptTokensDetails": [
            {"modality": "TEXT", "tokenCount": words}]}).encode(), count=count)

    # -- behaviours ------------------------------------------------------

    def serve(self, name, options, model, body, stream, count):
        times = int(options.get("times", "1"))
        delay = int(options.get("delay", "0")) / 1000
        gap = int(options.get("gap", "0")) / 1000
        failing = count <= times

        if name.startswith("fixture-"):
            return self.replay(name[len("fixture-"):], stream, delay, gap, count)
        if name == "echo":
            return self.answer(model, body, stream, delay, gap, count)
        if name == "fault-429":
            if failing:
                retry = options.get("retry", "0.2s")
                return self.send_error_json(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                        {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                         "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry}], count=count)
            return self.answer(model, body, stream, delay, gap, count)
        if name == "fault-429-per-day":
            return self.send_error_json(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                    {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.1s"}], count=count)
        if name in ("fault-500", "fault-503"):
            if failing:
                code = int(name[-3:])
                status = "INTERNAL" if code == 500 else "UNAVAILABLE"
                return self.send_error_json(code, status, "An internal error has occurred." if code == 500
                                            else "The model is overloaded. Please try again later.", count=count)
            return self.answer(model, body, stream, delay, gap, count)
        if name == "fault-400":
            return self.send_error_json(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", count=count)
        if name == "fault-html-502":
            if count <= int(options.get("times", "1000000")):
                page = b"<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
                return self.send_body(502, page, "text/html; charset=UTF-8", count=count)
            return self.answer(model, body, stream, delay, gap, count)
        if name == "fault-reset-before":
            return self.reset() if failing else self.answer(model, body, stream, delay, gap, count)
        if name == "fault-close-before":
            return self.close_quietly() if failing else self.answer(model, body, stream, delay, gap, count)
        if name == "fault-empty":
            if stream:
                self.start_stream(count)
                return self.end_stream()
            return self.send_body(200, b"", count=count)
        if name == "fault-malformed":
            if stream:
                self.start_stream(count)
                self.chunk(b'data: {"candidates": [{"content": \r\n\r\n')
                return self.end_stream()
            return self.send_body(200, b'{"candidates": [{"content": {"parts": [', count=count)
        if name == "fault-slow-head":
            time.sleep(int(options.get("delay", "3000")) / 1000)
            return self.answer(model, body, stream, 0, 0, count)
        if name in ("fault-reset-mid", "fault-truncated", "fault-slow-body", "fault-stream-error",
                    "fault-stream-error-data"):
            return self.broken(name, options, model, body, stream, count)
        return self.send_error_json(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta, "
                                    "or is not supported for generateContent.", count=count)

    def answer(self, model, body, stream, delay, gap, count):
        if not stream:
            return self.send_body(200, json.dumps(echo_unary(model, body)).encode(), count=count)
        self.start_stream(count)
        for index, event in enumerate(echo_events(model, body)):
            if index == 1 and gap:
                time.sleep(gap)
            elif index > 0 and delay:
                time.sleep(delay)
            self.chunk(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
        self.end_stream()

    def broken(self, name, options, model, body, stream, count):
        stall = int(options.get("delay", "5000")) / 1000
        if not stream:
            whole = json.dumps(echo_unary(model, body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(whole)))
            self.end_headers()
            self.wfile.write(whole[: len(whole) // 2])
            self.wfile.flush()
            if name == "fault-slow-body":
                time.sleep(stall)
                self.wfile.write(whole[len(whole) // 2:])
                return self.wfile.flush()
            return self.reset()
        first = echo_events(model, body)[0]
        self.start_stream(count)
        self.chunk(b"data: " + json.dumps(first).encode() + b"\r\n\r\n")
        if name == "fault-reset-mid":
            time.sleep(0.05)
            return self.reset()
        if name == "fault-truncated":
            self.chunk(b'data: {"candidates": [{"content": {"parts": [{"text": "cut')
            return self.end_stream()
        if name == "fault-slow-body":
            time.sleep(stall)
            for event in echo_events(model, body)[1:]:
                self.chunk(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
            return self.end_stream()
        error = error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        if name == "fault-stream-error-data":
            self.chunk(b"data: " + json.dumps(json.loads(error)).encode() + b"\r\n\r\n")
        else:
            self.chunk(error + b"\n")
        self.end_stream()

    def replay(self, fixture, stream, delay, gap, count):
        folder = os.path.join(self.state.fixtures, "googleai")
        path = None
        for candidate in (fixture, fixture + ".json", fixture + ".txt"):
            full = os.path.join(folder, candidate)
            if os.path.isfile(full):
                path = full
                break
        if path is None:
            return self.send_error_json(404, "NOT_FOUND", f"no fixture {fixture} in {folder}", count=count)
        with open(path, "rb") as file:
            raw = file.read()
        stripped = raw.lstrip()
        if stripped.startswith(b"{"):
            document = json.loads(raw)
            code = document["error"].get("code", 500) if "error" in document else 200
            if not stream or code != 200:
                return self.send_body(code, raw, count=count)
            self.start_stream(count)
            self.chunk(b"data: " + json.dumps(document).encode() + b"\r\n\r\n")
            return self.end_stream()
        if not stream:
            return self.send_error_json(400, "INVALID_ARGUMENT", f"{fixture} is a streaming fixture", count=count)
        self.start_stream(count)
        for index, event in enumerate(split_events(raw)):
            if index == 1 and gap:
                time.sleep(gap)
            elif index > 0 and delay:
                time.sleep(delay)
            self.chunk(event)
        self.end_stream()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_fixtures = os.environ.get("HYBRID_GEMINI_FIXTURES") or os.path.join(
        here, "..", "..", "..", "shared", "gemini-fixtures")
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
