"""What the test server answers, chosen by the model name: fixture replay,
echo answers and injected faults. A mixin of gemini_server.Handler, which
provides the HTTP plumbing (send_body, start_stream, chunk, reset, ...)."""

import functools
import json
import os
import random
import time
from urllib.parse import urlsplit

from gemini_grounding import grounded_events
from gemini_tools import tool_events
from gemini_wire import BadRequest, echo_events, echo_unary, error_body, json_events, split_events

# An error message no real server sends: terminal escapes (an OSC 52
# clipboard write, a screen clear, a bell), a forged log line and 100 KB.
HOSTILE_MESSAGE = "\x1b]52;c;aGk=\x07\x1b[2J\x9b31m" + "A" * 100_000 + "\nhybrid: forged line\r"
HOSTILE_STATUS = "INVALID_ARGUMENT\x1b[8m"

OWN_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "gemini", "googleai")


class Behaviours:
    def serve(self, name, options, model, body, stream, count, method="generateContent"):
        times = int(options.get("times", "1"))
        delay = int(options.get("delay", "0")) / 1000
        gap = int(options.get("gap", "0")) / 1000
        failing = count <= times
        if "first" in options:
            # A heavy-tailed wait before the answer: `first` ms, or `tail` ms
            # for `tailpct` percent of the requests (drawn per model and
            # request number, so a run is repeatable).
            draw = random.Random(f"{model}/{count}").random() * 100
            wait = int(options.get("tail", "0")) if draw < float(options.get("tailpct", "0")) else int(options["first"])
            time.sleep(wait / 1000)

        if name in ("redirect-301", "redirect-302", "redirect-307", "redirect-308"):
            return self.redirect(int(name[-3:]), options, method, count)
        if name.startswith("fixture-"):
            return self.replay(name[len("fixture-"):], stream, delay, gap, count)
        if name == "echo":
            return self.answer(model, body, stream, delay, gap, count, stamp="stamp" in options)
        if name == "json":
            return self.answer_json(body, stream, count)
        if name == "grounded":
            try:
                events = grounded_events(body)
            except BadRequest as error:
                return self.send_error_json(error.code, error.status, error.message, count=count)
            return self.send_events(events, stream, count)
        if name == "tools":
            try:
                events = tool_events(body, options)
            except BadRequest as error:
                return self.send_error_json(error.code, error.status, error.message, count=count)
            return self.send_events(events, stream, count)
        if name == "fault-429":
            if failing:
                retry = options.get("retry", "0.2s")
                details = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                    {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                     "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]}]
                if retry != "none":
                    details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry})
                return self.send_error_json(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", details,
                                            count=count)
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
        if name == "fault-huge":
            return self.huge(int(options.get("size", "1048576")), stream, count, int(options.get("chunk", "65536")))
        if name == "fault-endless":
            return self.endless(stream, count, model)
        if name == "fault-flood":
            return self.flood(options, stream, count, model)
        if name == "fault-unfinished":
            return self.unfinished(options, model, body, stream, count)
        if name == "fault-hostile-error":
            return self.send_error_json(400, HOSTILE_STATUS, HOSTILE_MESSAGE, count=count)
        if name in ("fault-reset-mid", "fault-truncated", "fault-slow-body", "fault-stream-error",
                    "fault-stream-error-data", "fault-stream-error-inline"):
            return self.broken(name, options, model, body, stream, count)
        return self.send_error_json(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta, "
                                    "or is not supported for generateContent.", count=count)

    def redirect(self, code, options, method, count):
        """A redirect to the same method of `echo`, on this server or, with
        port-N, on 127.0.0.1:N (another origin)."""
        port = int(options.get("port", str(self.server.server_address[1])))
        query = urlsplit(self.path).query
        location = f"http://127.0.0.1:{port}/v1beta/models/echo:{method}" + (f"?{query}" if query else "")
        self.send_response(code)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.send_header("x-test-request-count", str(count))
        self.end_headers()
        self.wfile.flush()

    def answer(self, model, body, stream, delay, gap, count, stamp=False):
        if not stream:
            return self.send_body(200, json.dumps(echo_unary(model, body)).encode(), count=count)
        self.start_stream(count)
        for index, event in enumerate(echo_events(model, body)):
            if index == 1 and gap:
                time.sleep(gap)
            elif index > 0 and delay:
                time.sleep(delay)
            if stamp:
                event["responseId"] = str(time.time_ns())
            self.chunk(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
        self.end_stream()

    def answer_json(self, body, stream, count):
        """Structured output: the request must carry responseMimeType
        application/json and a responseJsonSchema; the answer satisfies it."""
        events = json_events(body)
        if events is None:
            return self.send_error_json(400, "INVALID_ARGUMENT", "json expects responseMimeType application/json "
                                        "and a responseJsonSchema", count=count)
        if not stream:
            merged = events[-1]
            merged["candidates"][0]["content"]["parts"][0]["text"] = "".join(
                e["candidates"][0]["content"]["parts"][0]["text"] for e in events)
            return self.send_body(200, json.dumps(merged).encode(), count=count)
        self.start_stream(count)
        for event in events:
            self.chunk(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
        self.end_stream()

    def send_events(self, events, stream, count):
        """Events as one merged unary body (parts concatenated), or as SSE."""
        if not stream:
            merged = json.loads(json.dumps(events[-1]))
            merged["candidates"][0]["content"]["parts"] = [
                part for event in events for part in event["candidates"][0]["content"]["parts"]]
            return self.send_body(200, json.dumps(merged).encode(), count=count)
        self.start_stream(count)
        for event in events:
            self.chunk(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
        self.end_stream()

    def unfinished(self, options, model, body, stream, count):
        """An echo answer with no finishReason anywhere (as Vertex AI ends its
        streams), its body framed and ended as `body` says. Whole bodies:
        `chunked` (the default: ends with the last chunk), `length` (all of
        its Content-Length), `close` (no length, no chunks: ends with a clean
        close). Bodies cut at the transport: `chunked-cut` (a clean close
        before the last chunk), `length-cut` (a clean close short of the
        Content-Length), `reset` (a TCP reset). Streamed, a whole body holds
        `events` events (default 3, the whole answer), a cut one the first
        `events` (default 2); unary, a cut body is the first half."""
        framing = options.get("body", "chunked")
        cut = framing in ("chunked-cut", "length-cut", "reset")
        events = echo_events(model, body)
        for event in events:
            event["candidates"][0].pop("finishReason", None)
        if stream:
            whole = b"".join(b"data: " + json.dumps(event).encode() + b"\r\n\r\n" for event in events)
            sent = events[: int(options.get("events", "2" if cut else "3"))]
            payload = b"".join(b"data: " + json.dumps(event).encode() + b"\r\n\r\n" for event in sent)
            content_type = "text/event-stream"
        else:
            merged = echo_unary(model, body)
            merged["candidates"][0].pop("finishReason", None)
            whole = json.dumps(merged).encode()
            payload = whole[: len(whole) // 2] if cut else whole
            content_type = "application/json; charset=UTF-8"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("x-test-request-count", str(count))
        if framing in ("length", "length-cut"):
            self.send_header("Content-Length", str(len(whole)))
        elif framing == "close":
            self.send_header("Connection", "close")
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if framing in ("length", "length-cut", "close"):
            self.wfile.write(payload)
        else:
            self.chunk(payload)
        self.wfile.flush()
        if framing == "reset":
            # Read before the reset: a reset discards what the client has not read.
            time.sleep(0.05)
            return self.reset()
        if cut or framing == "close":
            return self.close_quietly()
        if framing == "chunked":
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
        if name == "fault-stream-error-inline":
            # A data line and a bare error line in one event: no blank line between.
            second = echo_events(model, body)[1]
            self.chunk(b"data: " + json.dumps(second).encode() + b"\n"
                       + json.dumps(json.loads(error)).encode() + b"\n\n")
            return self.end_stream()
        if name == "fault-stream-error-data":
            self.chunk(b"data: " + json.dumps(json.loads(error)).encode() + b"\r\n\r\n")
        else:
            self.chunk(error + b"\n")
        self.end_stream()

    def huge(self, size, stream, count, chunk=65536):
        """One answer whose text is `size` bytes: one SSE event (or one unary
        body), written in 64 KiB pieces, framed as chunks of `chunk` bytes
        (a server or proxy that frames every byte: `chunk-1`)."""
        event = {"candidates": [{"content": {"role": "model", "parts": [{"text": "x" * size}]},
                                 "finishReason": "STOP", "index": 0}], "modelVersion": "huge-model"}
        whole = json.dumps(event).encode()
        if stream:
            self.start_stream(count)
            whole = b"data: " + whole + b"\r\n\r\n"
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("x-test-request-count", str(count))
            self.end_headers()
        if chunk >= 65536:
            for start in range(0, len(whole), 65536):
                self.chunk(whole[start:start + 65536])
        else:
            framed = framed_in_chunks(whole, chunk)
            for start in range(0, len(framed), 65536):
                self.wfile.write(framed[start:start + 65536])
            self.wfile.flush()
        self.end_stream()

    def endless(self, stream, count, model):
        """A 200 whose body does not end while a client could care (one
        endless line of text): 64 MiB of it, or until the client hangs up.
        Bounded because FoundationNetworking, fed as fast as loopback goes,
        may hand the client the first bytes only seconds later (17 s once,
        with a 30 s body), which would put the test at the mercy of the
        machine's load. While it writes, `/_stats` counts it under `writing`, so a test can check that
        a client that gave up also closed the connection."""
        with self.state.lock:
            self.state.writing[model] = self.state.writing.get(model, 0) + 1
        try:
            self.start_stream(count)
            self.chunk(b'data: {"candidates": [{"content": {"parts": [{"text": "' if stream else b'{"candidates": [')
            piece = b"x" * 65536
            for _ in range(1024):
                self.chunk(piece)
            self.end_stream()
        finally:
            with self.state.lock:
                self.state.writing[model] -= 1

    def flood(self, options, stream, count, model):
        """A stream of valid events that does not end while a client could
        care: `rate` events a second (0, the default: as fast as the socket
        takes them), each with `size` bytes of text (default 1024), until
        `cap` bytes of body (default 64 MiB) or the client hangs up. The cap
        keeps a client without a bound of its own from taking the machine's
        memory. Counted under `writing` while it writes, as `endless`."""
        if not stream:
            return self.send_error_json(400, "INVALID_ARGUMENT", "fault-flood only streams", count=count)
        rate = int(options.get("rate", "0"))
        cap = int(options.get("cap", str(64 << 20)))
        event = {"candidates": [{"content": {"role": "model", "parts": [{"text": "x" * int(options.get("size", "1024"))}]},
                                 "index": 0}], "modelVersion": "flood-model"}
        framed = b"data: " + json.dumps(event).encode() + b"\r\n\r\n"
        with self.state.lock:
            self.state.writing[model] = self.state.writing.get(model, 0) + 1
        try:
            self.start_stream(count)
            start = time.monotonic()
            sent = 0
            index = 0
            while sent < cap:
                if rate:
                    wait = start + index / rate - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                self.chunk(framed)
                sent += len(framed)
                index += 1
            self.end_stream()
        finally:
            with self.state.lock:
                self.state.writing[model] -= 1

    def replay(self, fixture, stream, delay, gap, count):
        path = None
        # The shared recordings first, then the repository's own recorded-style
        # fixtures (Tests/Fixtures/gemini).
        for folder in (os.path.join(self.state.fixtures, "googleai"), OWN_FIXTURES):
            for candidate in (fixture, fixture + ".json", fixture + ".txt"):
                full = os.path.join(folder, candidate)
                if path is None and os.path.isfile(full):
                    path = full
        if path is None:
            return self.send_error_json(404, "NOT_FOUND", f"no fixture {fixture}", count=count)
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


@functools.lru_cache(maxsize=4)
def framed_in_chunks(whole, chunk):
    """`whole` as chunked transfer coding, `chunk` bytes a chunk (without the
    last, empty chunk); kept, since framing a megabyte byte by byte takes
    Python longer than sending it."""
    return b"".join(b"%x\r\n%s\r\n" % (len(whole[start:start + chunk]), whole[start:start + chunk])
                    for start in range(0, len(whole), chunk))
