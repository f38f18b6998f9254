#!/usr/bin/env python3
"""Writes hostile chat templates, each as a .jinja file and inside a tiny GGUF.

A GGUF carries its chat template as code (tokenizer.chat_template) and the
library's Jinja engine runs it in the app's process, so a template is input
like any other. Each kind below would end or freeze the host unbounded: an
arithmetic trap, unbounded recursion, an allocation bomb or a time bomb. The
tests (HostileTemplateTests) render each .jinja with the engine directly and
load each .gguf through the public API in a child process with a watchdog.

Each template is a ChatML-looking template with the bomb inside the message
loop, as a malicious file would hide it. The .gguf is the repository's tiny
random-weight model (make-tiny-model.py) with only the template replaced.

Usage: make-hostile-templates.py OUTPUT_DIR   (writes OUTPUT_DIR/<kind>.jinja and
<kind>.gguf, prints the kinds; a file already there with the same text is kept)
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Tens of thousands deep, as the issue found them; blocks a little less, so the
# template stays under the engine's 512 KiB source limit and its nesting is what fails.
DEPTH = 50_000
BLOCK_DEPTH = 20_000


def chat(bomb):
    """A ChatML template whose message loop also runs `bomb`."""
    return (
        "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
        "{{ message['content'] }}" + bomb + "<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


# kind -> template source
KINDS = {
    # arithmetic traps (Swift traps on overflow and on Int(_:) of a float out of range)
    "power-overflow": chat("{{ 2 ** 64 }}"),
    "floor-division-overflow": chat("{{ (-9223372036854775807 - 1) // -1 }}"),
    "unary-minus-overflow": chat("{{ -(-9223372036854775807 - 1) }}"),
    "percent-format-overflow": chat("{{ '%d' % (10.0 ** 300) }}"),
    "string-method-negative-index": chat("{{ '{-1}'.format(message['content']) }}"),
    # unbounded recursion (the stack overflows)
    "self-recursive-macro": "{% macro turn(n) %}{{ turn(n + 1) }}{% endmacro %}" + chat("{{ turn(0) }}"),
    "self-containing-namespace": "{% set ns = namespace(turns=0) %}{% set ns.self = ns %}" + chat("{{ ns }}"),
    "deep-expression-nesting": chat("{{ " + "(" * DEPTH + "1" + ")" * DEPTH + " }}"),
    "deep-block-nesting": chat("{% if true %}" * BLOCK_DEPTH + "{% endif %}" * BLOCK_DEPTH),
    # allocation bombs
    "repeat-bomb": chat("{{ 'a' * 10**12 }}"),
    "doubling-loop": "{% set ns = namespace(s='a') %}"
    + chat("{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}"),
    # time bombs
    "huge-range": chat("{% for i in range(10**18) %}{% endfor %}"),
    "nested-loops": chat("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
    # beyond the list: the same bombs reached another way
    "namespace-chain": "{% set ns = namespace(next=none) %}"
    + chat("{% for i in range(100000) %}{% set ns.next = [ns.next] %}{% endfor %}{{ ns.next | length }}"),
    "shared-value-repr": "{% macro grow(x, n) %}{% if n > 0 %}{{ grow([x, x], n - 1) }}{% else %}{{ x }}{% endif %}"
    "{% endmacro %}" + chat("{{ grow(1, 60) }}"),
    "int-filter-infinity": chat("{{ (10.0 ** 400) | int }}"),
}


def write_if_changed(path, text):
    if os.path.exists(path):
        with open(path, encoding="utf-8") as existing:
            if existing.read() == text:
                return
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(path + ".tmp", path)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-hostile-templates.py OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    spec = importlib.util.spec_from_file_location("tiny", os.path.join(HERE, "make-tiny-model.py"))
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    import gguf

    for kind, source in KINDS.items():
        jinja = os.path.join(out_dir, kind + ".jinja")
        model = os.path.join(out_dir, kind + ".gguf")
        unchanged = os.path.exists(jinja) and os.path.exists(model) and open(jinja, encoding="utf-8").read() == source
        if not unchanged:

            def edit(kv, source=source):
                kv["tokenizer.chat_template"] = gguf.GGUFValue(value=source, type=gguf.GGUFValueType.STRING)

            tiny.write_model(model, edit_kv=edit)
            write_if_changed(jinja, source)
        print(kind)


if __name__ == "__main__":
    main()
