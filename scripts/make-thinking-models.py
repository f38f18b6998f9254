#!/usr/bin/env python3
"""Writes the tiny random-weight model with thinking chat templates, one .gguf each.

The model (make-tiny-model.py) writes random text; with a template that opens a
thought block in its generation prompt, as the DeepSeek-R1 distills' does, all
of that text is thought until the block closes, which lets the tests
(ThinkingModelTests) follow the device's split of thoughts and answer, its
thought-token count and the `.off` switch end to end.

Usage: make-thinking-models.py OUTPUT_DIR   (writes OUTPUT_DIR/<kind>.gguf and
prints the kinds; a file already there from the same template is kept)
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% set content = message['content'] %}"
    "{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}"
    "{% if message['role'] == 'assistant' and message['reasoning_content'] is defined %}"
    "<think>\n{{ message['reasoning_content'] }}\n</think>\n\n{% endif %}"
    "{{ content }}<|im_end|>\n{% endfor %}"
)

# kind -> template source
KINDS = {
    # The generation prompt opens the block and there is no switch (DeepSeek-R1 distills).
    "opened": CHATML + "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}",
    # Qwen3's switch: thinking unless enable_thinking is false.
    "switchable": CHATML + "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n"
    "{% else %}<think>\n{% endif %}{% endif %}",
}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-thinking-models.py OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    spec = importlib.util.spec_from_file_location("tiny", os.path.join(HERE, "make-tiny-model.py"))
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    import gguf

    for kind, source in KINDS.items():
        model = os.path.join(out_dir, kind + ".gguf")
        stamp = model + ".jinja"
        unchanged = os.path.exists(model) and os.path.exists(stamp) and open(stamp, encoding="utf-8").read() == source
        if not unchanged:

            def edit(kv, source=source):
                kv["tokenizer.chat_template"] = gguf.GGUFValue(value=source, type=gguf.GGUFValueType.STRING)

            tiny.write_model(model, edit_kv=edit)
            with open(stamp, "w", encoding="utf-8") as out:
                out.write(source)
        print(kind)


if __name__ == "__main__":
    main()
