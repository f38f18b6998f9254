#!/usr/bin/env python3
"""The tables of Benchmarks/RESULTS.md, from the output of `make bench`'s steps.

    results-tables.py rows KIND FILE    TSV rows read from one step's output (KIND below)
    results-tables.py cpu               this machine's CPU as a table cell: lscpu "Model name" (ISA)
    results-tables.py write RESULTS ROWS CPU COMMIT DATE
                                        in each section ROWS has rows for, CPU's rows become ROWS'

A row is six tab-separated fields: section number, measurement, reference, ratio or figure,
goal, met (yes / no / - where no threshold is set). The steps' output is parsed as the
benchmark executables print it, so they need no machine-readable mode of their own.
`write` keeps the rows of other CPUs (each is the newest reading on its CPU) and every line
outside the tables; a section the run did not measure is left as it is.
Python 3 standard library only; scripts/test-results-tables.py checks it on canned output.
"""

import os
import re
import subprocess
import sys

HEADER = "| Measurement | Reference | Ratio or figure | Goal | Met | CPU | Commit, date |"
SEPARATOR = "|---|---|---|---|---|---|---|"
CPU_COLUMN = 5
NUM = r"(-?[0-9][0-9.]*|nan|-?inf)"
DASH = "\u2013"
UNRECORDED = "(ISA not recorded)"


def number(text):
    try:
        return float(text)
    except ValueError:
        return float("nan")


def met(condition):
    return "yes" if condition else "no"


def tokens(count):
    return f"{int(count):,}"


def throughput(text):
    rows = []
    for kind, goal, reference in (("prefill", 0.95, "pp512"), ("decode", 0.97, "tg128")):
        m = re.search(
            kind + r"\s+(\w+): HybridInference " + NUM + r" t/s, llama-bench \w+ " + NUM + r" t/s, ratio " + NUM,
            text)
        if m:
            what = "decode (respond)" if kind == "decode" else "prefill"
            rows.append((1, f"{what} {m[1]}, {m[2]} t/s", f"llama-bench {reference}, {m[3]} t/s", m[4],
                         f">= {goal}", met(number(m[4]) >= goal)))
    return rows


def decode(text):
    pattern = (r"decode tg128 on .+?, (\d+) thread\(s\): session\.streamResponse " + NUM + r" t/s, respond "
               + NUM + r" t/s, llama-bench -d (\d+) " + NUM + r" t/s; streamed / llama-bench " + NUM)
    return [(2, f"streamed decode tg128, {m[1]} thread(s), {m[2]} t/s", f"llama-bench tg128 -d {m[4]}, {m[5]} t/s",
             m[6], ">= 0.97", met(number(m[6]) >= 0.97)) for m in re.finditer(pattern, text)]


def depth(text):
    rows = []
    table = re.findall(r"^(\d+)\s+\d+\s+\d+\s.*?\s" + NUM + r" \([^)]*\) \(-fa \d faster\)", text, re.M)
    if table:
        values = [value for _, value in table]
        rows.append((3, ".automatic streamed decode at " + " / ".join(tokens(d) for d, _ in table) + " tokens",
                     "the faster of llama-bench -fa 0 / -fa 1 there", " / ".join(values), ">= 0.95 at each depth",
                     met(all(number(v) >= 0.95 for v in values))))
    m = re.search(r"^chat \.automatic / faster \(.*?\): lowest turn " + NUM + r", median " + NUM, text, re.M)
    if m:
        rows.append((3, ".automatic, a 10-turn chat, 64 tokens a turn",
                     "the faster of -fa 0 / -fa 1 at each turn's depth", f"lowest turn {m[1]}, median {m[2]}",
                     ">= 0.95 every turn", met(number(m[1]) >= 0.95)))
    m = re.search(r"prefill pp(\d+) / llama-bench pp512, \d+ rounds: off " + NUM + r" \([^)]*\), on " + NUM, text)
    if m:
        rows.append((3, f"prefill pp{m[1]}, flash attention off and on", "llama-bench pp512, same setting",
                     f"off {m[2]}, on {m[3]}", ">= 0.95", met(min(number(m[2]), number(m[3])) >= 0.95)))
    return rows


def concurrent(text):
    rates = {int(m[1]): (m[2], m[3], m[4])
             for m in re.finditer(r"^\| (\d+) \| " + NUM + r" \| " + NUM + r" \| " + NUM + r" \| \S+x \|$", text, re.M)}
    unequal = re.search(r"warning: at \[([^\]]*)\] session\(s\) the two sides decoded different", text)
    unequal = {int(c) for c in re.findall(r"\d+", unequal[1])} if unequal else set()
    rows = []
    if 4 in rates:
        ours, server, ratio = rates[4]
        note = " (unequal prompt tokens)" if 4 in unequal else ""
        rows.append((4, f"4 sessions, {ours} t/s{note}", f"llama-server -np 4, {server} t/s", ratio, ">= 1.0",
                     met(number(ratio) >= 1.0 and not note)))
        if 1 in rates:
            rows.append((4, "4 sessions over 1, aggregate t/s", f"1 session, {rates[1][0]} t/s",
                         f"{number(ours) / number(rates[1][0]):.2f}x", ">= 1.3x",
                         met(number(ours) / number(rates[1][0]) >= 1.3)))
        if 16 in rates:
            rows.append((4, f"16 sessions, {rates[16][0]} t/s", f"4 sessions, {ours} t/s",
                         f"{number(rates[16][0]) / number(ours):.2f}", ">= 1.0 (not slower)",
                         met(number(rates[16][0]) >= number(ours))))
    return rows


def grammar(text):
    m = re.search(r"unconstrained " + NUM + r" t/s .*?JSON Schema grammar " + NUM + r" t/s", text)
    r = re.search(r"constrained / unconstrained: " + NUM + r"; grammar cost " + NUM + " %", text)
    if not (m and r):
        return []
    return [(5, f"decode under a JSON Schema grammar, {m[2]} t/s", f"unconstrained decode, {m[1]} t/s",
             f"{r[1]} (cost {r[2]}%)", "cost < 15%", met(number(r[2]) < 15))]


def multiturn(text):
    turns = re.findall(r"turn (\d+): ttft with KV reuse " + NUM + r" ms, without " + NUM + " ms", text)
    m = re.search(r"turn \d+ / turn 1 with reuse: " + NUM + r"; without reuse: " + NUM, text)
    if not (turns and m):
        return []
    (_, first, first_cold), (last, final, final_cold) = turns[0], turns[-1]
    return [(6, f"turn {last} time to first token, KV reused, {final} ms", f"turn 1, {first} ms", m[1], "<= 1.3",
             met(number(m[1]) <= 1.3)),
            (6, f"turn {last} without reuse, {final_cold} ms", f"turn 1 without reuse, {first_cold} ms", m[2],
             "none (for contrast)", DASH)]


def promptcache(text):
    found = {m[1]: m for m in re.finditer(
        r"(live session|no prompt cache|context, prompt cache)[^:]*: ttft " + NUM
        + r" ms .*?prompt (\d+) tokens, (\d+) not decoded", text)}
    live = found.get("live session")
    if not live:
        return []
    rows = []
    for key, what in (("context, prompt cache", "a new context with the prompt cache"),
                      ("no prompt cache", "a new context without it")):
        m = found.get(key)
        if m:
            loaded = f", {tokens(m[4])} tokens loaded" if key.endswith("prompt cache") else ""
            rows.append((7, f"{what}: {m[2]} ms to first token ({tokens(m[3])}-token prompt{loaded})",
                         f"the live session, {live[2]} ms", f"{number(m[2]) / number(live[2]):.2f}x",
                         "none set (load, not prefill)", DASH))
    return rows


def cancel(text):
    m = re.search(r"during decode " + NUM + r" ms, during a 3,000-token prefill " + NUM
                  + r" ms; the probe alone on an idle session " + NUM + " ms", text)
    if not m:
        return []

    def verdict(ms):
        return "yes" if number(ms) <= 100 else "not shown: includes the probe"

    return [(8, f"cancel during decode, then a 1-token probe answered: {m[1]} ms", f"the probe alone, {m[3]} ms",
             f"{m[1]} ms", "<= 100 ms", verdict(m[1])),
            (8, f"cancel during a 3,000-token prefill, then the probe: {m[2]} ms", f"the probe alone, {m[3]} ms",
             f"{m[2]} ms", "<= 100 ms", verdict(m[2]))]


def memory(text):
    peaks = re.findall(r"peak RSS with (\d+) session\(s\): " + NUM + " MiB", text)
    m = re.search(r"four sessions " + NUM + r" MiB vs one \+ 4 x KV = " + NUM + " MiB", text)
    rows = []
    if m:
        rows.append((9, f"peak RSS, 4 sessions, {m[1]} MiB", f"1 session + 4 x KV cache (4,096 tokens), {m[2]} MiB",
                     f"{number(m[1]) / number(m[2]):.2f}", "<= 1.0", met(number(m[1]) <= number(m[2]))))
    if peaks:
        rows.append((9, "peak RSS, " + " / ".join(c for c, _ in peaks) + " sessions", DASH,
                     " / ".join(v for _, v in peaks) + " MiB", "reported", DASH))
    return rows


def render(text):
    m = re.search(r"render " + NUM + r" ms \(median of \d+; the engine alone " + NUM + r" ms\).*, (\S.*)$", text, re.M)
    if not m:
        return []
    fallback = "" if m[3].strip() == "model template" else " (fallback template)"
    return [(10, f"a 50-turn conversation rendered{fallback}", DASH, f"{m[1]} ms", "< 1 ms",
             met(number(m[1]) < 1 and not fallback))]


def parity(text):
    m = re.search(r"Identical turns: (\d+) / (\d+)", text)
    return [(10, "greedy answers, turns identical", "llama-server --jinja, same GGUF and prompts",
             f"{m[1]} / {m[2]}", "reported (prompts equal: tested)", DASH)] if m else []


def cloud(text):
    rows = []
    ours = dict(re.findall(r"^\| CloudGeminiModel \| (\d+) \| " + NUM, text, re.M))
    curl = dict(re.findall(r"^\| curl(?: --parallel)? \| (\d+) \| " + NUM, text, re.M))
    for n in ours:
        if n in curl:
            rows.append((11, f"CloudGeminiModel, {n} in flight, median {ours[n]} ms", f"curl, {curl[n]} ms",
                         f"{number(ours[n]) - number(curl[n]):+.2f} ms", "none set (reported)", DASH))
    only = re.search(r"^\| only cloud \| " + NUM, text, re.M)
    fallback = re.search(r"^\| prefer on-device, falling back \| " + NUM, text, re.M)
    extra = re.search(r"Extra latency of the fallback: " + NUM + " ms", text)
    if only and fallback and extra:
        rows.append((11, f"prefer on-device, its model missing: {fallback[1]} ms", f"only cloud, {only[1]} ms",
                     f"{number(extra[1]):+.2f} ms", "<= 1 ms", met(number(extra[1]) <= 1)))
    m = re.search(r"after " + NUM + r" ms, against " + NUM + r" ms for only-on-device; the offline fallback costs "
                  + NUM + " ms", text)
    if m:
        rows.append((11, f"prefer cloud, its port closed: first snapshot {m[1]} ms", f"only on-device, {m[2]} ms",
                     f"{number(m[3]):+.2f} ms", "<= 50 ms", met(number(m[3]) <= 50)))
    later = re.search(r"^\| prefer cloud, later \(verdict remembered\) \| " + NUM, text, re.M)
    alone = re.search(r"^\| the secondary alone \| " + NUM, text, re.M)
    extra = re.search(r"Later requests over the secondary alone: " + NUM + " ms median", text)
    if later and alone and extra:
        rows.append((11, f"prefer cloud on a dead link, later requests: {later[1]} ms",
                     f"the on-device secondary alone, {alone[1]} ms", f"{number(extra[1]):+.2f} ms", "<= 50 ms",
                     met(number(extra[1]) <= 50)))
    return rows


def sse(text):
    sizes = {s: r for s, _, r in re.findall(r"^\| (\d+) MB \| " + NUM + r" ms \| " + NUM + r" MB/s \|", text, re.M)}
    m = re.search(r"Throughput at (\d+) MB over throughput at (\d+) MB: " + NUM, text)
    if not m:
        return []
    return [(12, f"one SSE event of {m[1]} MB, {sizes.get(m[1], '?')} MB/s",
             f"one of {m[2]} MB, {sizes.get(m[2], '?')} MB/s", m[3], "linear in size (1.0; no threshold set)", DASH)]


def streaming(text):
    cells = []
    for label, ratio in re.findall(r"^\| ((?:text|structured), [\d,]+ \u00d7 [^|]+?) \| [^|]* \| [^|]* \| [^|]* \| ([^|]*) \|",
                                   text, re.M):
        kind, size = label.split(", ")[0], label.split(" \u00d7 ")[-1]
        cells.append((f"{kind} {size} {ratio.strip()}", number(ratio)))
    if not cells:
        return []
    stopped = "stopped at" in text
    return [(12, "a delta's cost in a long stream, last tenth over first" + (" (a row stopped)" if stopped else ""),
             "the first tenth of the same stream", ", ".join(c for c, _ in cells), "<= 1.0 (linear)",
             met(not stopped and all(r <= 1.0 for _, r in cells)))]


def chunks(text):
    found = re.findall(r"^\| (\d+) B \| " + NUM + r" \| " + NUM + r" \| " + NUM + r" \|$", text, re.M)
    if not found:
        return []

    def size(n):
        n = int(n)
        return f"{n // 1024} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"

    return [(12, "a 1 MB answer in " + " / ".join(size(c) for c, *_ in found) + " chunks, time",
             "curl's time_total, same body", " / ".join(r for *_, r in found), "near curl's (no threshold set)", DASH)]


def fleet(text):
    # The paired rounds' table (9 cells a row) where there is one, else the single round's (15).
    tables = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
              if line.startswith("| ")]
    goal_rows = [(c[0], c[2], c[5], c[7], c[-1]) for c in tables if len(c) == 9 and c[-1] in ("met", "missed")] or [
        (c[0], c[2], c[6], c[9], c[-1]) for c in tables if len(c) == 15 and c[-1] in ("met", "missed")]
    if not goal_rows:
        failed = "benchmark failed" in text
        return [(13, "remote clients at scale", "curl", "the run failed: see its output in history/",
                 "Δ median <= 2 ms, p99 <= 1.1x curl's", "no")] if failed else []

    def server(name):
        return "llama-server" if name.startswith("llama-server") else (
            "Gemini loopback" if "Gemini" in name else "OpenAI loopback")

    met_count = sum(1 for row in goal_rows if row[-1] == "met")
    shown = [r for r in goal_rows if r[-1] == "missed"] or [
        r for r in goal_rows if server(r[0]) == "llama-server" and r[1] == "32 warm"]
    figures = "; ".join(f"{server(s)} {n} Δ {d} ms, p99 {p}" + (" missed" if g == "missed" else "")
                        for s, n, d, p, g in shown)
    return [(13, f"{len(goal_rows)} goal rows: 3 servers, 32 and 128 in flight, cold and warm",
             "curl, the same requests on the same cores", f"{met_count} / {len(goal_rows)} met; {figures}",
             "Δ median <= 2 ms, p99 <= 1.1x curl's", met(met_count == len(goal_rows)))]


def hedging(text):
    alone = re.search(r"^\| one cloud model \| " + NUM + r" \| " + NUM + r" \| " + NUM, text, re.M)
    hedged = re.search(r"^\| hybrid of two, hedgeAfter (\d+) ms \| " + NUM + r" \| " + NUM + r" \| " + NUM, text, re.M)
    extra = re.search(r"Extra requests: (\d+) of (\d+) \(" + NUM + r"%\)", text)
    if not (alone and hedged):
        return []
    rows = [(14, f"p99 time to first text, hedged after {hedged[1]} ms: {hedged[4]} ms",
             f"one cloud model, {alone[3]} ms", f"{number(hedged[4]) / number(alone[3]):.3f}",
             "none set (p99 and its cost reported)", DASH),
            (14, f"median, hedged: {hedged[2]} ms", f"one cloud model, {alone[1]} ms",
             f"{number(hedged[2]) / number(alone[1]):.2f}", "none set", DASH)]
    if extra:
        rows.append((14, f"extra requests: {extra[1]} of {extra[2]}", DASH, f"{extra[3]}%", "reported", DASH))
    return rows


def download(text):
    m = re.search(r"model download of \S+ \((\d+) bytes\) from a loopback CDN on .+?, median of (\d+): ModelDownload "
                  + NUM + r" ms \(" + NUM + r" MB/s\), curl -o " + NUM + r" ms \(" + NUM + r" MB/s\); ours / curl "
                  + NUM + r" \(goal <= 1\.2\); SHA-256 \.(\w+)", text)
    rows = []
    if m:
        rows.append((15, f"ModelDownload, {tokens(m[1])} bytes, {m[3]} ms ({m[4]} MB/s; SHA-256 .{m[8]}, while writing)",
                     f"curl -o, {m[5]} ms ({m[6]} MB/s)", m[7], "<= 1.2", met(number(m[7]) <= 1.2)))
        s = re.search(r"curl -o then sha256sum: " + NUM + r" ms \(" + NUM + r" MB/s\); ours / \(curl \+ sha256sum\) "
                      + NUM, text)
        if s:
            rows.append((15, f"ModelDownload, {m[3]} ms", f"curl -o then sha256sum, {s[1]} ms ({s[2]} MB/s)", s[3],
                         "none set (what a script does)", DASH))
    r = re.search(r"resume after a cut at 40% \((\d+) bytes\): (\d+) GETs; the second asked (\S+) and was sent (\d+) "
                  r"bytes \(size - cut = (\d+)\); all requests (\d+) bytes of (\d+): (.+)$", text, re.M)
    if r:
        exact = r[8].strip() == "only the missing bytes moved"
        rows.append((15, f"resumed after a cut at {tokens(r[1])} bytes (40%): the second GET asked {r[3]}",
                     f"the missing {tokens(r[5])} bytes", f"{tokens(r[4])} bytes sent; {tokens(r[6])} in all of "
                     f"{tokens(r[7])}", "only the missing bytes move", met(exact and r[4] == r[5] and r[6] == r[7])))
    return rows


def thinking(text):
    m = re.search(r"thinking split, streamed decode of (\d+) tokens on \S+, median of (\d+): with the splitter " + NUM
                  + r" t/s \((\d+) of (\d+) tokens thought\), without " + NUM + r" t/s; ratio " + NUM, text)
    if not m:
        return []
    return [(16, f"streamed decode tg{m[1]} through the thought splitter, {m[3]} t/s ({m[4]} of {m[5]} tokens thought)",
             f"the same weights without it, {m[6]} t/s", m[7], ">= 0.97", met(number(m[7]) >= 0.97))]


def image(text):
    m = re.search(r"image first token, median of (\d+), (\d+) thread\(s\): HybridInference " + NUM
                  + r" ms, llama-mtmd-cli " + NUM + r" ms \(its encode \+ prompt eval " + NUM + r" ms\); ratio " + NUM,
                  text)
    k = re.search(r"second turn first token: image kept " + NUM + r" ms, encoded again " + NUM + r" ms; speedup "
                  + NUM + "x", text)
    rows = []
    # BENCH_IMAGE_NOTE: what the run's figures need said (a loaded machine), in both rows.
    note = os.environ.get("BENCH_IMAGE_NOTE", "")
    if m:
        rows.append((17, f"time to first token, one 28x28 image, {m[3]} ms ({m[1]} runs, {m[2]} threads"
                     + (f"; {note})" if note else ")"),
                     f"llama-mtmd-cli -n 1, {m[4]} ms (its encode + prompt eval {m[5]} ms)", m[6], "none set",
                     DASH))
    if k:
        rows.append((17, f"second turn's first token, the image's cells kept, {k[1]} ms" + (f" ({note})" if note else ""),
                     f"the conversation prefilled and encoded again, {k[2]} ms", f"{k[3]}x", "> 1x (faster)",
                     met(number(k[3]) > 1)))
    return rows


def gpu(text):
    pattern = (r"gpu (prefill|decode) (\w+) of (.+?), median of \d+: HybridInference " + NUM
               + r" t/s, llama-bench -ngl (\d+) (\w+) " + NUM + r" t/s, ratio " + NUM)
    rows = []
    for m in re.finditer(pattern, text):
        goal = 0.95 if m[1] == "prefill" else 0.97
        what = m[1]
        rows.append((18, f"{what} {m[2]} of {m[3]}, {m[4]} t/s", f"llama-bench -ngl {m[5]} {m[6]}, {m[7]} t/s", m[8],
                     f">= {goal}", met(number(m[8]) >= goal)))
    return rows


PARSERS = {f.__name__: f for f in (throughput, decode, depth, concurrent, grammar, multiturn, promptcache, cancel,
                                    memory, render, parity, cloud, sse, streaming, chunks, fleet, hedging, download,
                                    thinking, image, gpu)}


def cpu_label(cpuinfo=None, lscpu=None):
    """lscpu "Model name" and the instruction set llama.cpp's kernels are chosen by."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    if lscpu is None:
        try:
            lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        except OSError:
            lscpu = ""
    name = re.search(r"^Model name:\s*(.+)$", lscpu, re.M) or re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^(?:flags|Features)\s*:\s*(.*)$", cpuinfo, re.M)
    flags = set(flags[1].split()) if flags else set()
    if "avx512f" in flags:
        isa = "AVX-512, AMX" if "amx_tile" in flags else "AVX-512"
    elif "avx2" in flags:
        isa = "AVX2"
    elif "sve" in flags:
        isa = "NEON, SVE"
    elif "asimd" in flags:
        isa = "NEON"
    else:
        isa = "ISA unknown"
    return f"{name[1].strip() if name else 'unknown CPU'} ({isa})"


def field(text):
    """One TSV field: whitespace (tabs and newlines included) collapsed to single spaces."""
    return " ".join(str(text).split())


def cell(text):
    """One Markdown table cell: a field whose pipes are escaped (once)."""
    return re.sub(r"(?<!\\)\|", r"\\|", field(text))


def split_row(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def model(cpu):
    """The "Model name" part of a CPU cell."""
    return cpu.rsplit(" (", 1)[0]


def write(results, rows, cpu, commit, date):
    """Replaces, in each section `rows` names, the rows of `cpu` with `rows`; also placeholder rows, and
    rows of the same model name whose ISA was not recorded (read before the ISA was noted)."""
    by_section = {}
    for row in rows:
        by_section.setdefault(int(row[0]), []).append(row[1:])
    lines = results.split("\n")
    for section, new in sorted(by_section.items()):
        start = next((i for i, line in enumerate(lines) if line.startswith(f"## {section}. ")), None)
        if start is None:
            raise SystemExit(f"results-tables: no section '## {section}. ' in RESULTS.md")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        fresh = ["| " + " | ".join(cell(v) for v in (*row, cpu, f"{commit}, {date}")) + " |" for row in new]
        top = next((i for i in range(start, end) if lines[i].startswith("|")), None)
        if top is None:
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            lines[end:end] = ["", HEADER, SEPARATOR, *fresh]
            continue
        bottom = top
        while bottom < end and lines[bottom].startswith("|"):
            bottom += 1
        kept, place = [], None
        for line in lines[top + 2:bottom]:
            cells = split_row(line)
            theirs = cells[CPU_COLUMN] if len(cells) > CPU_COLUMN else ""
            if theirs == cpu or theirs in ("", DASH, "-") or theirs == model(cpu) + " " + UNRECORDED:
                place = len(kept) if place is None else place
            else:
                kept.append(line)
        place = len(kept) if place is None else place
        lines[top:bottom] = [HEADER, SEPARATOR, *kept[:place], *fresh, *kept[place:]]
    return "\n".join(lines)


def main(argv):
    if len(argv) == 4 and argv[1] == "rows" and argv[2] in PARSERS:
        with open(argv[3], encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            found = PARSERS[argv[2]](text)
        except (ValueError, IndexError, ZeroDivisionError) as error:
            print(f"results-tables: {argv[2]}: output not understood ({error})", file=sys.stderr)
            return 1
        if not found:
            print(f"results-tables: {argv[2]}: no result line in {argv[3]}", file=sys.stderr)
        for row in found:
            print("\t".join(field(v) for v in row))
        return 0
    if len(argv) == 2 and argv[1] == "cpu":
        print(cpu_label())
        return 0
    if len(argv) == 7 and argv[1] == "write":
        with open(argv[3], encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        if any(len(row) != 6 for row in rows):
            print("results-tables: a row without six fields", file=sys.stderr)
            return 1
        with open(argv[2], encoding="utf-8") as f:
            text = write(f.read(), rows, argv[4], argv[5], argv[6])
        with open(argv[2] + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(argv[2] + ".tmp", argv[2])
        return 0
    print("\n\n".join(__doc__.split("\n\n")[:2]) + "\nKIND: " + ", ".join(PARSERS), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
