#!/usr/bin/env python3
"""Checks scripts/results-tables.py on canned benchmark output (run by `make lint`).

The canned lines are the benchmark executables' own output, as recorded in
Benchmarks/history/. The last test runs the generator over the real
Benchmarks/RESULTS.md, so a hand edit that breaks a section's table fails here.
"""

import importlib.util
import os
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = importlib.util.spec_from_file_location("results_tables", os.path.join(ROOT, "scripts", "results-tables.py"))
tables = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(tables)

CANNED = {
    "throughput": """\
prefill  pp511: HybridInference 264.9 t/s, llama-bench pp512 280.9 t/s, ratio 0.943
decode   tg128: HybridInference 87.0 t/s, llama-bench tg128 96.8 t/s, ratio 0.899
""",
    "decode": """\
decode tg128 on Intel(R) Xeon(R) Processor @ 2.80GHz, 2 thread(s): session.streamResponse 86.4 t/s, respond 87.1 t/s, \
llama-bench -d 42 90.9 t/s; streamed / llama-bench 0.951 (runs ["90.7"] vs ["91.8"])
context switches per token: streamed 2.06, respond 1.03
decode tg128 on Intel(R) Xeon(R) Processor @ 2.80GHz, 1 thread(s): session.streamResponse 45.2 t/s, respond 46.6 t/s, \
llama-bench -d 42 47.3 t/s; streamed / llama-bench 0.98 (runs ["48.1"] vs ["49.4"])
""",
    "depth": """\
CPU: AMD EPYC; library .automatic: flash attention on (-0.1% with it on), calibrated in 613 ms
depth  tokens  rounds  lib off  bench -fa 0  off ratio (spread)   lib on  bench -fa 1  on ratio (spread)    .automatic
0      45      6       116.2    119.1        0.989 (0.84-1.05)    128.4   123.7        0.972 (0.96-1.96)    \
0.987 (0.96-1.9) (-fa 1 faster), per-round max 0.987 (0.96-1.13)
256    270     6       103.3    105.3        0.991 (0.96-1.04)    104.9   100.4        0.984 (0.97-1.1)     \
0.973 (0.94-1.09) (-fa 1 faster), per-round max 0.964 (0.94-1.0)
1024   1068    3       74.2     77.7         0.948 (0.93-1.0)     76.9    78.6         0.978 (0.95-1.02)    \
0.995 (0.98-1.0) (-fa 1 faster), per-round max 0.995 (0.98-1.0)
3000   3223    3       48.4     48.6         0.995 (0.99-1.0)     55.1    55.5         0.993 (0.95-1.0)     \
0.99 (0.92-1.06) (-fa 1 faster), per-round max 0.99 (0.88-1.06)
turn 1: depth 134, off 0.974 (0.96-1.19), on 0.981 (0.96-1.01), .automatic / faster 0.976 (0.97-1.13) (-fa 1 faster)
chat .automatic / faster (the faster by the median of llama-bench's paired -fa 1 / -fa 0): lowest turn 0.949, \
median 0.969 (goal: every turn >= 0.95)
chat off: lowest turn 0.961, median 1.027 (goal: every turn >= 0.95)
chat .automatic / per-round max: lowest turn 0.908, median 1.004 (goal: every turn >= 0.95)
prefill pp483 / llama-bench pp512, 6 rounds: off 0.99 (0.83-1.18), on 0.962 (0.92-1.0) (goal >= 0.95)
""",
    "concurrent": """\
| sessions | in-process t/s | llama-server -np 4 t/s | in-process / llama-server (median of pairs) | in-process / 1 session(s) |
| ---: | ---: | ---: | ---: | ---: |
| 1 | 66.8 | 63.7 | 1.047 | 1.0x |
| 4 | 76.4 | 74.3 | 1.027 | 1.14x |
| 16 | 73.6 | 71.0 | 1.037 | 1.1x |
(4: in-process ["76.4"], llama-server ["74.3"], ratios ["1.027"]; prompt tokens decoded per round: in-process [92], \
llama-server [92])
""",
    "grammar": """\
decode, greedy, same prompt: unconstrained 87.2 t/s (127 tokens), constrained by a JSON Schema grammar 80.6 t/s (127 tokens)
constrained / unconstrained: 0.925; grammar cost 7.5 % (target < 15 %)
""",
    "multiturn": """\
turn 1: ttft with KV reuse 114.7 ms, without 166.1 ms
turn 8: ttft with KV reuse 148.3 ms, without 1187.9 ms
turn 8 / turn 1 with reuse: 1.29; without reuse: 7.15
""",
    "image": """\
image first token, median of 3, 2 thread(s): HybridInference 4.31 ms, llama-mtmd-cli 3.08 ms (its encode + prompt eval 2.03 ms); ratio 1.399
second turn first token: image kept 2.89 ms, encoded again 5.91 ms; speedup 2.05x
""",
    "promptcache": """\
restored conversation, turn 9, on AMD EPYC:
  live session (KV in memory)   : ttft 351.2 ms (runs ["351.2"]), prompt 1149 tokens, 1030 not decoded
  new context, no prompt cache  : ttft 4343.0 ms (runs ["4343.0"]), prompt 1149 tokens, 0 not decoded
  new context, prompt cache     : ttft 461.2 ms (runs ["461.2"]), prompt 1149 tokens, 1014 not decoded
""",
    "cancel": "cancel \u2192 a one-token probe on the same session answered: during decode 64.1 ms, during a 3,000-token "
              "prefill 121.8 ms; the probe alone on an idle session 98.5 ms\n",
    "memory": """\
peak RSS with 1 session(s): 229.5 MiB
peak RSS with 4 session(s): 229.3 MiB
peak RSS with 16 session(s): 229.6 MiB
KV cache per session (4096 tokens, f16): 90.0 MiB
four sessions 229.3 MiB vs one + 4 x KV = 589.5 MiB: within target
""",
    "render": "50-turn conversation on the model's own template: render 0.384 ms (median of 501; the engine alone "
              "0.147 ms), parse 0.085 ms once, 5535 characters, model template\n",
    "parity": "## Chat template parity: in-process (our Jinja) beside llama-server --jinja\n\n"
              "**Identical turns: 11 / 15**\n",
    "cloud": """\
| CloudGeminiModel | 1 | 1.54 | 1.76 | 628 |
| bare URLSession (delegate) | 1 | 1.28 | 1.54 | 757 |
| curl | 1 | 0.35 | 0.43 | 2190 |
| CloudGeminiModel | 32 | 14.02 | 21.13 | 1041 |
| curl --parallel | 32 | 4.21 | 16.35 | 1977 |
| only cloud | 1.39 | 1.79 |
| prefer on-device, falling back | 1.41 | 1.82 |

Extra latency of the fallback: 0.01 ms per request (target <= 1 ms).

Prefer cloud with the cloud's port closed: first snapshot (from the on-device model) after 64.46 ms, against 64.85 ms \
for only-on-device; the offline fallback costs -0.39 ms (target <= 50 ms).

| prefer cloud, later (verdict remembered) | 0.09 | 0.17 | 0.38 |
| the secondary alone | 0.05 | 0.08 | 0.32 |

Later requests over the secondary alone: 0.04 ms median, 0.33 ms at worst (target <= 50 ms).
""",
    "sse": """\
| 1 MB | 10.97 ms | 91.18 MB/s |
| 5 MB | 54.08 ms | 92.46 MB/s |
| 20 MB | 227.31 ms | 87.99 MB/s |

Throughput at 20 MB over throughput at 1 MB: 0.96 (1.0 is linear).
""",
    "streaming": """\
| text, 200,000 \u00d7 1 B | 202.9 ms | 1.031 | 1.015 | 0.985 | 30.0 MiB | 2.633 MiB |
| text, single event of 200,000 B | 0.394 ms | \u2013 | \u2013 | \u2013 | 29.6 MiB | 2.277 MiB |
| text, 2,000 \u00d7 8 KiB | 22.0 ms | 14.0 | 5.792 | 0.414 | 87.2 MiB | 44.5 MiB |
| structured, 2,000 \u00d7 8 KiB | 322.4 ms | 43.6 | 34.0 | 0.780 | 197.8 MiB | 154.7 MiB |
""",
    "chunks": """\
| chunk | library median ms | curl median ms | library / curl |
| ---: | ---: | ---: | ---: |
| 1 B | 66.64 | 101.61 | 0.66 |
| 64 B | 8.60 | 6.86 | 1.25 |
| 65536 B | 6.97 | 5.05 | 1.38 |
""",
    "fleet": """\
| server | client | N | rounds | \u0394 median per round | median \u0394 | p99 ratio per round | median p99 ratio | goal |
| --- | --- | ---: | ---: | --- | ---: | --- | ---: | --- |
| fleet server (loopback, Swift, recorded Gemini answer) | CloudGeminiModel | 32 cold | 5 | -3.86, 1.03 | -3.74 | 0.30 | 0.31 | met |
| fleet server (loopback, Swift, fixed OpenAI answer) | OpenAICompatibleModel | 32 warm | 5 | -0.90 | -1.97 | 0.88 | 0.54 | met |
| llama-server -np 32, --threads-http 160 | OpenAICompatibleModel | 32 warm | 5 | 9.57 | 7.67 | 1.23 | 1.10 | missed |
| llama-server -np 128, --threads-http 160 | OpenAICompatibleModel | 128 cold | 5 | 33.14 | 33.14 | 0.90 | 0.90 | missed |
| llama-server -np 4, default HTTP pool (32 queue for 4 slots) | OpenAICompatibleModel | 32 warm | 5 | 3.88 | 7.56 | 1.20 | 1.24 | (queueing; outside) |
""",
    "hedging": """\
| one cloud model | 54 | 86 | 3015 | 3191 | 9.5% |
| hybrid of two, hedgeAfter 150 ms | 54 | 86 | 223 | 3005 | 0.9% |

Extra requests: 79 of 1000 (7.9%), the hedges sent to the secondary; each loser was cancelled when the other delivered.
""",
    "download": """\
model download of SmolLM2-135M-Instruct.Q4_1.gguf (98362432 bytes) from a loopback CDN on AMD EPYC 7B13, median of 7: \
ModelDownload 251.3 ms (391.4 MB/s), curl -o 228.4 ms (430.7 MB/s); ours / curl 1.1 (goal <= 1.2); \
SHA-256 .openSSL (libcrypto's EVP), hashed while writing
curl -o then sha256sum: 702.9 ms (139.9 MB/s); ours / (curl + sha256sum) 0.358
runs (ms): ModelDownload ["251.3"], curl -o ["228.4"], curl + sha256sum ["702.9"]
resume after a cut at 40% (39344972 bytes): 2 GETs; the second asked bytes=39344972- and was sent 59017460 bytes \
(size - cut = 59017460); all requests 98362432 bytes of 98362432: only the missing bytes moved
""",
    "thinking": """\
thinking split, streamed decode of 128 tokens on SmolLM2-135M-Instruct.Q4_1.gguf, median of 7: with the splitter \
145.6 t/s (128 of 128 tokens thought), without 147.8 t/s; ratio 0.985 (goal >= 0.97)
runs (t/s): with ["145.6"], without ["147.8"]
""",
    "gpu": """\
gpu prefill pp483 of SmolLM2-135M-Instruct.Q4_1.gguf on Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)), 31 of 31 layers, median of 7: HybridInference \
101.5 t/s, llama-bench -ngl 99 pp512 104.2 t/s, ratio 0.974
gpu decode tg128 of SmolLM2-135M-Instruct.Q4_1.gguf on Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)), 31 of 31 layers, median of 7: HybridInference \
20.1 t/s, llama-bench -ngl 99 tg128 21.3 t/s, ratio 0.944
""",
}

RESULTS = """\
# Benchmark results

Intro.

## 1. Prefill and decode beside llama-bench

What it measures.

| Measurement | Reference | Ratio or figure | Goal | Met | CPU | Commit, date |
|---|---|---|---|---|---|---|
| old | ref | 0.9 | >= 0.95 | no | AMD EPYC (AVX2) | abc, 2026-01-01 |
| keep | ref | 1.0 | >= 0.95 | yes | Other CPU (AVX-512) | def, 2026-01-02 |

## 2. Streamed decode

| Measurement | Reference | Ratio or figure | Goal | Met | CPU | Commit, date |
|---|---|---|---|---|---|---|
| no reading | \u2013 | \u2013 | >= 0.97 | \u2013 | \u2013 | \u2013 |

A note after the table.

## 3. Attention at depth

No table yet.

## 4. Sessions answering at once

| Measurement | Reference | Ratio or figure | Goal | Met | CPU | Commit, date |
|---|---|---|---|---|---|---|
| untouched | ref | 1.0 | >= 1.0 | yes | AMD EPYC (AVX2) | abc, 2026-01-01 |
"""


class Parsers(unittest.TestCase):
    def rows(self, kind):
        return tables.PARSERS[kind](CANNED[kind])

    def test_everyKind_readsItsCannedOutput(self):
        for kind in tables.PARSERS:
            with self.subTest(kind=kind):
                rows = self.rows(kind)
                self.assertTrue(rows)
                for row in rows:
                    self.assertEqual(len(row), 6)
                    self.assertIn(row[5], ("yes", "no", tables.DASH, "not shown: includes the probe"))

    def test_ratiosAndVerdicts(self):
        self.assertEqual([(r[3], r[5]) for r in self.rows("throughput")], [("0.943", "no"), ("0.899", "no")])
        self.assertEqual([(r[3], r[5]) for r in self.rows("decode")], [("0.951", "no"), ("0.98", "yes")])
        table, chat, prefill = self.rows("depth")
        self.assertEqual(table[1], ".automatic streamed decode at 0 / 256 / 1,024 / 3,000 tokens")
        self.assertEqual((table[3], table[5]), ("0.987 / 0.973 / 0.995 / 0.99", "yes"))
        self.assertEqual((chat[3], chat[5]), ("lowest turn 0.949, median 0.969", "no"))
        self.assertEqual((prefill[3], prefill[5]), ("off 0.99, on 0.962", "yes"))
        four, scaling, sixteen = self.rows("concurrent")
        self.assertEqual((four[3], four[5]), ("1.027", "yes"))
        self.assertEqual((scaling[3], scaling[5]), ("1.14x", "no"))
        self.assertEqual((sixteen[3], sixteen[5]), ("0.96", "no"))
        self.assertEqual(self.rows("grammar")[0][3:], ("0.925 (cost 7.5%)", "cost < 15%", "yes"))
        self.assertEqual([r[3] for r in self.rows("multiturn")], ["1.29", "7.15"])
        self.assertEqual([r[3] for r in self.rows("promptcache")], ["1.31x", "12.37x"])
        first, second = self.rows("image")
        self.assertEqual((first[0], first[3], first[5]), (17, "1.399", "\u2013"))
        self.assertEqual(first[2], "llama-mtmd-cli -n 1, 3.08 ms (its encode + prompt eval 2.03 ms)")
        self.assertEqual((second[3], second[5]), ("2.05x", "yes"))
        self.assertEqual([r[5] for r in self.rows("cancel")], ["yes", "not shown: includes the probe"])
        self.assertEqual(self.rows("memory")[0][3:], ("0.39", "<= 1.0", "yes"))
        self.assertEqual(self.rows("render")[0][3], "0.384 ms")
        self.assertEqual(self.rows("parity")[0][3], "11 / 15")
        self.assertEqual([r[3] for r in self.rows("cloud")], ["+1.19 ms", "+9.81 ms", "+0.01 ms", "-0.39 ms", "+0.04 ms"])
        self.assertEqual(self.rows("sse")[0][3], "0.96")
        self.assertEqual(self.rows("streaming")[0][3], "text 1 B 0.985, text 8 KiB 0.414, structured 8 KiB 0.780")
        self.assertEqual(self.rows("chunks")[0][1], "a 1 MB answer in 1 B / 64 B / 64 KiB chunks, time")
        self.assertEqual(self.rows("chunks")[0][3], "0.66 / 1.25 / 1.38")
        fleet = self.rows("fleet")[0]
        self.assertEqual(fleet[1], "4 goal rows: 3 servers, 32 and 128 in flight, cold and warm")
        self.assertTrue(fleet[3].startswith("2 / 4 met; llama-server 32 warm \u0394 7.67 ms, p99 1.10 missed"))
        self.assertEqual(fleet[5], "no")
        self.assertEqual([r[3] for r in self.rows("hedging")], ["0.074", "1.00", "7.9%"])
        ours, script, resumed = self.rows("download")
        self.assertEqual(ours[1], "ModelDownload, 98,362,432 bytes, 251.3 ms (391.4 MB/s; SHA-256 .openSSL, while writing)")
        self.assertEqual((ours[3], ours[4], ours[5]), ("1.1", "<= 1.2", "yes"))
        self.assertEqual((script[3], script[5]), ("0.358", tables.DASH))
        self.assertEqual(resumed[1], "resumed after a cut at 39,344,972 bytes (40%): the second GET asked bytes=39344972-")
        self.assertEqual((resumed[3], resumed[5]), ("59,017,460 bytes sent; 98,362,432 in all of 98,362,432", "yes"))

    def test_theThinkingSplit_isARowBesideTheSameWeights_andMissesBelow097(self):
        row = self.rows("thinking")[0]
        self.assertEqual(row[1], "streamed decode tg128 through the thought splitter, 145.6 t/s (128 of 128 tokens thought)")
        self.assertEqual((row[2], row[3], row[4], row[5]), ("the same weights without it, 147.8 t/s", "0.985", ">= 0.97",
                                                            "yes"))
        slow = CANNED["thinking"].replace("ratio 0.985", "ratio 0.95")
        self.assertEqual(tables.thinking(slow)[0][5], "no")

    def test_theGPURows_nameTheDevice_andMissBelowTheirGoals(self):
        prefill, decode = self.rows("gpu")
        self.assertEqual(prefill[1], "prefill pp483 of SmolLM2-135M-Instruct.Q4_1.gguf on Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)), 31 of 31 layers, 101.5 t/s")
        self.assertEqual((prefill[2], prefill[3], prefill[4], prefill[5]),
                         ("llama-bench -ngl 99 pp512, 104.2 t/s", "0.974", ">= 0.95", "yes"))
        self.assertEqual(decode[1], "decode tg128 of SmolLM2-135M-Instruct.Q4_1.gguf on Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)), 31 of 31 layers, 20.1 t/s")
        self.assertEqual((decode[3], decode[4], decode[5]), ("0.944", ">= 0.97", "no"))

    def test_aSlowDownload_orAResumeThatMovedMore_missesItsGoal(self):
        slow = CANNED["download"].replace("ours / curl 1.1 ", "ours / curl 1.35 ")
        self.assertEqual(tables.download(slow)[0][5], "no")
        more = CANNED["download"].replace("all requests 98362432 bytes", "all requests 98427968 bytes")
        self.assertEqual(tables.download(more)[2][5], "no")

    def test_aFailedFleet_isARowThatSaysSo(self):
        rows = tables.fleet("(the fleet benchmark failed in this run: see the reading note)\n")
        self.assertEqual(rows[0][5], "no")
        self.assertEqual(tables.fleet(""), [])

    def test_unequalPromptTokens_failTheFourSessionGoal(self):
        text = CANNED["concurrent"] + "warning: at [4] session(s) the two sides decoded different prompt tokens\n"
        self.assertEqual(tables.concurrent(text)[0][5], "no")

    def test_outputWithoutResultLines_givesNoRows(self):
        for kind, parse in tables.PARSERS.items():
            with self.subTest(kind=kind):
                self.assertEqual(parse("local-benchmark: error: something\n"), [])


class Write(unittest.TestCase):
    def write(self, rows, cpu="AMD EPYC (AVX2)"):
        return tables.write(RESULTS, rows, cpu, "1234abc", "2026-12-08")

    def test_theRunsCPU_isReplaced_otherCPUsKept_otherSectionsUntouched(self):
        out = self.write([("1", "new", "llama-bench", "0.97", ">= 0.95", "yes")])
        self.assertNotIn("| old |", out)
        self.assertIn("| new | llama-bench | 0.97 | >= 0.95 | yes | AMD EPYC (AVX2) | 1234abc, 2026-12-08 |", out)
        self.assertLess(out.index("| new |"), out.index("| keep |"))
        self.assertIn("| untouched |", out)
        self.assertEqual(out.split("## 2.")[1], RESULTS.split("## 2.")[1])

    def test_aPlaceholderRow_goes_andTheLinesAfterTheTableStay(self):
        out = self.write([("2", "streamed", "llama-bench", "0.98", ">= 0.97", "yes")])
        self.assertNotIn("no reading", out)
        self.assertIn("yes | AMD EPYC (AVX2) | 1234abc, 2026-12-08 |\n\nA note after the table.", out)

    def test_anotherCPU_isAddedBesideTheRows(self):
        out = self.write([("4", "four", "server", "1.1", ">= 1.0", "yes")], cpu="Intel(R) Xeon(R) Processor (AVX-512)")
        section = out.split("## 4.")[1]
        self.assertIn("| untouched |", section)
        self.assertLess(section.index("| untouched |"), section.index("| four |"))

    def test_aRowOfTheSameModelWithoutItsISA_isReplaced_anotherModelsIsNot(self):
        text = RESULTS.replace("| keep | ref | 1.0 | >= 0.95 | yes | Other CPU (AVX-512) |",
                               "| unrecorded | ref | 1.0 | >= 0.95 | yes | AMD EPYC (ISA not recorded) |")
        out = tables.write(text, [("1", "new", "ref", "1", "g", "yes")], "AMD EPYC (AVX2)", "c", "d")
        self.assertNotIn("| unrecorded |", out)
        out = tables.write(text, [("1", "new", "ref", "1", "g", "yes")], "Intel(R) Xeon(R) Processor (AVX2)", "c", "d")
        self.assertIn("| unrecorded |", out)

    def test_aSectionWithoutATable_getsOne(self):
        out = self.write([("3", "depth", "bench", "1.0", ">= 0.95", "yes")])
        section = out.split("## 3.")[1].split("## 4.")[0]
        self.assertIn("No table yet.\n\n" + tables.HEADER + "\n" + tables.SEPARATOR + "\n| depth |", section)

    def test_pipesInAFigure_areEscapedOnce(self):
        out = self.write([("1", "a | b", "ref", "1", "g", "yes")])
        self.assertIn("| a \\| b |", out)
        self.assertEqual(tables.split_row("| a \\| b | c |"), ["a \\| b", "c"])

    def test_aMissingSection_stopsBeforeWritingAnything(self):
        with self.assertRaises(SystemExit):
            self.write([("9", "memory", "ref", "1", "g", "yes")])

    def test_rowsThroughTheCommandLine(self):
        with tempfile.TemporaryDirectory() as work:
            paths = {name: os.path.join(work, name) for name in ("RESULTS.md", "decode", "rows.tsv")}
            with open(paths["RESULTS.md"], "w", encoding="utf-8") as f:
                f.write(RESULTS)
            with open(paths["decode"], "w", encoding="utf-8") as f:
                f.write(CANNED["decode"])
            with open(paths["rows.tsv"], "w", encoding="utf-8") as out:
                import contextlib
                with contextlib.redirect_stdout(out):
                    self.assertEqual(tables.main(["x", "rows", "decode", paths["decode"]]), 0)
            self.assertEqual(
                tables.main(["x", "write", paths["RESULTS.md"], paths["rows.tsv"], "CPU (AVX2)", "c0ffee", "2026-12-08"]),
                0)
            with open(paths["RESULTS.md"], encoding="utf-8") as f:
                section = f.read().split("## 2.")[1].split("## 3.")[0]
            self.assertEqual(section.count("| CPU (AVX2) | c0ffee, 2026-12-08 |"), 2)


class CPU(unittest.TestCase):
    def test_theInstructionSet_isReadFromTheFlags(self):
        lscpu = "Architecture: x86_64\nModel name:            Intel(R) Xeon(R) Processor\n"
        cases = {
            "flags\t\t: fpu sse avx avx2 avx512f amx_tile amx_int8": "Intel(R) Xeon(R) Processor (AVX-512, AMX)",
            "flags\t\t: fpu sse avx avx2 avx512f avx512bw": "Intel(R) Xeon(R) Processor (AVX-512)",
            "flags\t\t: fpu sse avx avx2": "Intel(R) Xeon(R) Processor (AVX2)",
        }
        for flags, label in cases.items():
            self.assertEqual(tables.cpu_label(cpuinfo=f"model name\t: ignored\n{flags}\n", lscpu=lscpu), label)
        arm = "processor\t: 0\nFeatures\t: fp asimd sve\n"
        self.assertEqual(tables.cpu_label(cpuinfo=arm, lscpu="Model name: Neoverse-V1\n"), "Neoverse-V1 (NEON, SVE)")
        self.assertEqual(tables.cpu_label(cpuinfo="model name\t: AMD EPYC\nflags\t: avx2\n", lscpu=""),
                         "AMD EPYC (AVX2)")


class TheRepositorysResults(unittest.TestCase):
    """Benchmarks/RESULTS.md keeps the sections, in order, that code and make bench name."""

    TITLES = ["Prefill and decode beside llama-bench", "Streamed decode", "Attention at depth",
              "Sessions answering at once", "Structured output overhead", "Multi-turn time to first token",
              "Restored conversation", "Cancellation", "Memory", "Chat template render and parity",
              "Cloud client beside curl", "Large events and tiny chunks", "Remote clients at scale", "Hedged requests",
              "Model downloads", "Thinking models", "Images on device",
              "GPU offload beside llama-bench"]

    def test_everySection_isThere_inOrder_withATableTheGeneratorCanRewrite(self):
        with open(os.path.join(ROOT, "Benchmarks", "RESULTS.md"), encoding="utf-8") as f:
            text = f.read()
        headings = [line[3:] for line in text.split("\n") if line.startswith("## ")]
        self.assertEqual(headings, [f"{n}. {title}" for n, title in enumerate(self.TITLES, 1)])
        for n in range(1, len(self.TITLES) + 1):
            section = text.split(f"## {n}. ")[1].split("\n## ")[0]
            self.assertIn(tables.HEADER + "\n" + tables.SEPARATOR + "\n|", section)
            for line in section.split("\n"):
                if line.startswith("|"):
                    self.assertEqual(len(tables.split_row(line)), 7, line)
        rows = [(str(n), "m", "r", "1", "g", "yes") for n in range(1, len(self.TITLES) + 1)]
        rewritten = tables.write(text, rows, "Test CPU (AVX2)", "c0ffee", "2026-12-08")
        self.assertEqual(rewritten.count("| Test CPU (AVX2) | c0ffee, 2026-12-08 |"), len(self.TITLES))


if __name__ == "__main__":
    unittest.main()
