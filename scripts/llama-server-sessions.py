#!/usr/bin/env python3
"""Sessions answering at once against llama-server, timed by a client that is
not the library's: `local-benchmark concurrent` runs it beside its in-process
sessions so that the server's figure holds no Swift HTTP client.

    llama-server-sessions.py PORT REQUESTS.json

REQUESTS.json is {"requests": [{"prompt": [token ids], "n_predict": N}, ...]}:
the token ids the library's own sessions prefill (the same rendered chat), one
request per session. Each session gets a thread and a keep-alive connection of
its own, opened before the clock starts; the clock runs from just before the
first request is sent to the last reply, the same wall the in-process figure
uses (first request to last token). Every request is greedy (temperature 0,
top_k 1), seeded, with cache_prompt on (a slot keeps the prompt prefix it
shares with the next request, as the library's sequences keep the
instructions). Prints one JSON line: {"tokens": generated tokens from the
server's own replies (tokens_predicted), "seconds": wall time, "prefilled":
prompt tokens the server decoded rather than took from a slot's cache (its
timings' prompt_n, summed), "perRequest": [tokens, ...]}. Standard library only.
"""

import http.client
import json
import sys
import threading
import time


def main():
    port = int(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as file:
        requests = json.load(file)["requests"]
    connections = []
    for _ in requests:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        connection.connect()
        connections.append(connection)
    bodies = [
        json.dumps(
            {
                "prompt": request["prompt"],
                "n_predict": request["n_predict"],
                "temperature": 0,
                "top_k": 1,
                "seed": 42,
                "cache_prompt": True,
                "stream": False,
            }
        ).encode()
        for request in requests
    ]
    start_line = threading.Barrier(len(requests) + 1)
    generated = [0] * len(requests)
    prefilled = [0] * len(requests)
    finished = [0.0] * len(requests)
    errors = []

    def session(index):
        connection = connections[index]
        start_line.wait()
        try:
            connection.request(
                "POST", "/completion", body=bodies[index], headers={"Content-Type": "application/json"}
            )
            reply = connection.getresponse()
            payload = reply.read()
            finished[index] = time.perf_counter()
            if reply.status != 200:
                errors.append(f"HTTP {reply.status}: {payload[:200]!r}")
                return
            answer = json.loads(payload)
            generated[index] = int(answer["tokens_predicted"])
            prefilled[index] = int(answer["timings"]["prompt_n"])
        except Exception as error:  # reported, never hidden
            errors.append(repr(error))

    threads = [threading.Thread(target=session, args=(index,)) for index in range(len(requests))]
    for thread in threads:
        thread.start()
    start = time.perf_counter()
    start_line.wait()
    for thread in threads:
        thread.join()
    for connection in connections:
        connection.close()
    if errors:
        print(json.dumps({"errors": errors}))
        sys.exit(1)
    print(
        json.dumps(
            {
                "tokens": sum(generated),
                "seconds": max(finished) - start,
                "prefilled": sum(prefilled),
                "perRequest": generated,
            }
        )
    )


if __name__ == "__main__":
    main()
