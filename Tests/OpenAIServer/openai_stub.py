#!/usr/bin/env python3
"""An OpenAI chat-completions stub on loopback, for fault injection in the
OpenAI-compatible backend's tests (the real llama-server covers the happy path).

Python standard library only:

    python3 openai_stub.py [--api-key KEY]

It binds 127.0.0.1 on a free port, prints the port on the first line of
stdout, and serves until its stdin closes or it is killed. With --api-key,
a request without `Authorization: Bearer KEY` is a 401 in OpenAI's envelope.

POST /v1/chat/completions; the `model` field picks the behaviour, with
`~`-separated options (times-N: fail N times, then answer; retry-S: the
Retry-After header value):

    echo               answer "echo: <last user text>" (3 chunks when streamed); a
                       `content` array is checked (text, image_url with a base64
                       data URL, input_audio wav|mp3; else 400) and its media echo
                       as [image/png, 3 bytes] or [wav audio, 4 bytes]
    fault-429          `times` x 429 with Retry-After (default 1), then echo
    fault-500          `times` x 500 in the envelope (default: always), then echo
    fault-html-502     `times` x an HTML 502 page (default: always), then echo
    fault-text-503     a text/plain 503, always
    fault-400          400 invalid_request_error, always
    fault-malformed-chunk   one good chunk, then a chunk that is not JSON
    fault-stream-error      one good chunk, then data: {"error": {...}}
    fault-stream-error-first  data: {"error": {...}} before any content
    fault-echo-key     400 whose message quotes the bearer token it received
    fault-echo-key-text  a text/plain 400 quoting the token 190 characters in
    fault-cut          streamed: the role chunk and the text, then the connection
                       closes cleanly: no finish_reason, no [DONE]; unary: half the
                       body its Content-Length promises, then a clean close
    fault-no-done      streamed: the whole answer with its finish_reason, no [DONE]
    fault-reset        `times` x a TCP reset once the request was read, then echo
    fault-hostile-error  400 whose type and 100 KB message carry terminal escapes,
                       C1 controls and line breaks
    fault-hostile-text   a text/plain 503 whose first line carries terminal escapes
    fault-flood        streamed: valid content chunks without end, `rate` a second
                       (default 0: as fast as the socket takes them) of `size` bytes of
                       text each (default 1024), until `cap` bytes (default 64 MiB) or
                       the client hangs up; never a finish_reason or [DONE]
    tools              a two-round tool exchange: without a tool output, calls
                       get_weather(city: Paris) (streamed in fragments); with
                       one, checks the call and its output came back (else 400
                       saying what is wrong) and answers "It is sunny in Paris."

GET /v1/models lists "echo". GET /_stats?model=M returns {"count": N, "writing": flood
bodies for M still being written}.
"""

import argparse
import base64
import binascii
import json
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

COUNTS = {}
WRITING = {}
LOCK = threading.Lock()
# An error message no real server sends: terminal escapes (an OSC 52
# clipboard write, a screen clear, a bell), a forged log line and 100 KB.
HOSTILE_MESSAGE = "\x1b]52;c;aGk=\x07\x1b[2J\x9b31m" + "A" * 100_000 + "\nhybrid: forged line\r"


def envelope(message, kind, code):
    return json.dumps({"error": {"message": message, "type": kind, "code": code}}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    api_key = None

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/v1/models":
            self.send(200, json.dumps({"object": "list", "data": [{"id": "echo", "object": "model"}]}).encode())
        elif url.path == "/_stats":
            model = parse_qs(url.query).get("model", [""])[0]
            with LOCK:
                stats = {"count": COUNTS.get(model, 0), "writing": WRITING.get(model, 0)}
            self.send(200, json.dumps(stats).encode())
        else:
            self.send(404, envelope("not found", "invalid_request_error", None))

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        if urlparse(self.path).path != "/v1/chat/completions":
            return self.send(404, envelope("not found", "invalid_request_error", None))
        auth = self.headers.get("Authorization", "")
        model = body.get("model", "")
        name, *opts = model.split("~")
        options = dict(o.split("-", 1) for o in opts if "-" in o)
        with LOCK:
            COUNTS[model] = COUNTS.get(model, 0) + 1
            count = COUNTS[model]
        if name == "fault-echo-key":
            return self.send(400, envelope("bad key: " + auth[len("Bearer "):], "invalid_request_error", "invalid_api_key"))
        if name == "fault-echo-key-text":
            # The token 190 characters in: a cut at 200 would fall inside it.
            return self.send(400, ("x" * 190 + auth[len("Bearer "):] + " rest\n").encode(), "text/plain")
        if self.api_key is not None and auth != "Bearer " + self.api_key:
            return self.send(401, envelope("Incorrect API key provided", "invalid_request_error", "invalid_api_key"))
        times = int(options.get("times", "1000000"))
        failing = count <= times
        if name == "fault-429" and count <= int(options.get("times", "1")):
            return self.send(429, envelope("Rate limit reached", "rate_limit_exceeded", "rate_limit_exceeded"),
                             headers=[("Retry-After", options.get("retry", "1"))])
        if name == "fault-500" and failing:
            return self.send(500, envelope("The server had an error", "server_error", None))
        if name == "fault-html-502" and failing:
            return self.send(502, b"<html><body><h1>502 Bad Gateway</h1>secret page</body></html>", "text/html")
        if name == "fault-text-503":
            return self.send(503, b"upstream unavailable\nmore detail\n", "text/plain; charset=utf-8")
        if name == "fault-reset" and count <= int(options.get("times", "1")):
            return self.reset()
        if name == "fault-hostile-error":
            return self.send(400, envelope(HOSTILE_MESSAGE, "invalid_request_error\x1b[8m", "hostile\x07"))
        if name == "fault-hostile-text":
            return self.send(503, b"\x1b[2Jupstream \x1b]8;;http://x\x07down\x1b]8;;\x07\nmore\n",
                             "text/plain; charset=utf-8")
        if name == "fault-400":
            return self.send(400, envelope("max_tokens is too large", "invalid_request_error", "invalid_value"))
        if name == "fault-flood" and body.get("stream"):
            return self.flood(model, options)
        if name == "tools":
            problem = tool_problem(body)
            if problem:
                return self.send(400, envelope(problem, "invalid_request_error", "tools"))
            if body["messages"][-1].get("role") != "tool":
                return self.call_weather(model, body)
            if body.get("stream"):
                return self.stream(model, [{"role": "assistant", "content": "It is sunny "}, {"content": "in Paris."}],
                                   "stop")
        self.answer(model, name, body)

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

    def flood(self, model, options):
        """Content chunks without end (see fault-flood above); the cap keeps a
        client without a bound of its own from taking the machine's memory."""
        rate = int(options.get("rate", "0"))
        cap = int(options.get("cap", str(64 << 20)))
        payload = {"id": "chatcmpl-f", "object": "chat.completion.chunk", "model": model,
                   "choices": [{"index": 0, "delta": {"content": "x" * int(options.get("size", "1024"))},
                                "finish_reason": None}]}
        framed = ("data: " + json.dumps(payload) + "\n\n").encode()
        with LOCK:
            WRITING[model] = WRITING.get(model, 0) + 1
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            start = time.monotonic()
            sent = 0
            index = 0
            while sent < cap:
                if rate:
                    wait = start + index / rate - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                self.wfile.write(framed)
                self.wfile.flush()
                sent += len(framed)
                index += 1
        except OSError:
            pass
        finally:
            self.close_connection = True
            with LOCK:
                WRITING[model] -= 1

    def call_weather(self, model, body):
        call = {"id": "call_w1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
        if not body.get("stream"):
            return self.send(200, json.dumps({
                "id": "chatcmpl-t", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                             "finish_reason": "tool_calls"}]}).encode())
        self.stream(model, [
            {"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": "call_w1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
        ], "tool_calls")

    def stream(self, model, deltas, finish):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for index, delta in enumerate(deltas):
            last = index == len(deltas) - 1
            payload = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish if last else None}]}
            self.wfile.write(("data: " + json.dumps(payload) + "\n\n").encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True

    def answer(self, model, name, body):
        last = ""
        for message in body.get("messages", []):
            if message.get("role") == "user":
                try:
                    last = user_text(message.get("content", ""))
                except ValueError as error:
                    return self.send(400, envelope(str(error), "invalid_request_error", 400))
        text = "It is sunny in Paris." if name == "tools" else "echo: " + last
        usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
        if not body.get("stream"):
            whole = json.dumps({
                "id": "chatcmpl-1", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": usage}).encode()
            if name != "fault-cut":
                return self.send(200, whole)
            # Half of what the Content-Length promises, then a clean close (FIN).
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(whole)))
            self.end_headers()
            self.wfile.write(whole[: len(whole) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()

        def event(payload):
            data = payload if isinstance(payload, str) else json.dumps(payload)
            self.wfile.write(("data: " + data + "\n\n").encode())
            self.wfile.flush()

        def chunk(delta, finish=None):
            return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        event(chunk({"role": "assistant", "content": None}))
        if name == "fault-stream-error-first":
            event(json.loads(envelope("overloaded", "server_error", 503)))
            return
        event(chunk({"content": "echo: "}))
        if name == "fault-malformed-chunk":
            event('{"id": "chatcmpl-1", "choices": [')
            return
        if name == "fault-stream-error":
            event(json.loads(envelope("the slot was cancelled", "server_error", 500)))
            return
        event(chunk({"content": last}))
        if name == "fault-cut":
            return
        event(chunk({}, "stop"))
        if name == "fault-no-done":
            return
        if (body.get("stream_options") or {}).get("include_usage"):
            event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model, "choices": [], "usage": usage})
        event("[DONE]")
        self.close_connection = True


DATA_URL = re.compile(r"^data:(image/[A-Za-z0-9!#$&^_.+-]+);base64,(.+)$", re.S)


def decoded(text, where):
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{where}: invalid base64")


def user_text(content):
    """A user message's text, with its media as markers; ValueError for a part OpenAI would refuse."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        raise ValueError("content must be a string or a non-empty array of parts")
    text = ""
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and set(part) == {"type", "text"} and isinstance(part["text"], str):
            text += part["text"]
        elif kind == "image_url" and set(part) == {"type", "image_url"}:
            match = DATA_URL.match((part["image_url"] or {}).get("url", ""))
            if not match:
                raise ValueError(f"content[{index}].image_url.url: not a base64 image data URL")
            text += f"[{match.group(1)}, {len(decoded(match.group(2), f'content[{index}]'))} bytes]"
        elif kind == "input_audio" and set(part) == {"type", "input_audio"}:
            audio = part["input_audio"] or {}
            if audio.get("format") not in ("wav", "mp3") or set(audio) != {"data", "format"}:
                raise ValueError(f"content[{index}].input_audio: format must be wav or mp3")
            text += f"[{audio['format']} audio, {len(decoded(audio['data'], f'content[{index}]'))} bytes]"
        else:
            raise ValueError(f"content[{index}]: unknown part {json.dumps(part)[:80]}")
    return text


def tool_problem(body):
    """What is wrong with a request of the `tools` exchange, or None."""
    names = [tool.get("function", {}).get("name") for tool in body.get("tools") or []]
    messages = body.get("messages", [])
    if messages and messages[-1].get("role") != "tool":
        if "get_weather" not in names:
            return "get_weather is not offered: %r" % names
        schema = body["tools"][names.index("get_weather")]["function"].get("parameters", {})
        if schema.get("properties", {}).get("city", {}).get("type") != "string":
            return "get_weather's parameters are not its schema: %r" % schema
        return None
    calls = [m for m in messages if m.get("role") == "assistant" and m.get("tool_calls")]
    if not calls:
        return "the tool output came back without the assistant's call"
    call = calls[-1]["tool_calls"][0]
    if call.get("id") != "call_w1" or call.get("function", {}).get("name") != "get_weather":
        return "the call came back changed: %r" % call
    if json.loads(call["function"].get("arguments", "null")) != {"city": "Paris"}:
        return "the call's arguments came back changed: %r" % call
    output = messages[-1]
    if output.get("tool_call_id") != "call_w1" or "Sunny" not in (output.get("content") or ""):
        return "the tool output is not the call's: %r" % output
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--api-key")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    Handler.api_key = args.api_key
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the parent closes stdin (or exits)
    server.shutdown()


if __name__ == "__main__":
    main()
