#!/usr/bin/env python3
"""Renders every reference chat template over the conversation corpus with jinja2,
exactly as transformers' apply_chat_template does, into expected.json for the
Swift engine's byte-for-byte comparison (ChatTemplateReferenceTests).

Usage: $HI_VENV/bin/python scripts/render-chat-templates.py  (needs jinja2, see setup-python.sh)
"""
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "chat-templates")
NOW = datetime(2025, 3, 7, 9, 30, 0)  # strftime_now's fixed date (the Swift test uses the same)
BOS, EOS = "<|bos|>", "<|eos|>"


class AssistantTracker(Extension):
    """transformers' {% generation %} block, which renders its body unchanged."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return NOW.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    with open(os.path.join(ROOT, "conversations.json"), encoding="utf-8") as f:
        conversations = json.load(f)
    env = environment()
    results = {}
    names = sorted(n for n in os.listdir(os.path.join(ROOT, "templates")) if n.endswith(".jinja"))
    for name in names:
        with open(os.path.join(ROOT, "templates", name), encoding="utf-8") as f:
            source = f.read()
        rows = []
        try:
            template = env.from_string(source)
        except Exception as error:  # compile error: every conversation fails
            rows = [{"error": f"{type(error).__name__}: {error}"} for _ in conversations]
            results[name] = rows
            continue
        for conversation in conversations:
            try:
                # enable_thinking is passed only when the conversation sets it, as llama.cpp
                # does, so a template's `enable_thinking is defined` sees the default otherwise.
                switches = {k: conversation[k] for k in ("enable_thinking",) if k in conversation}
                output = template.render(messages=conversation["messages"], tools=conversation.get("tools"),
                                         documents=None, add_generation_prompt=conversation["add_generation_prompt"],
                                         bos_token=BOS, eos_token=EOS, **switches)
                rows.append({"output": output})
            except Exception as error:
                rows.append({"error": f"{type(error).__name__}: {error}"})
        results[name] = rows
    with open(os.path.join(ROOT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"jinja2": jinja2.__version__, "results": results}, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    errors = sum(1 for rows in results.values() for row in rows if "error" in row)
    print(f"{len(names)} templates x {len(conversations)} conversations, {errors} raise in jinja2", file=sys.stderr)


if __name__ == "__main__":
    main()
