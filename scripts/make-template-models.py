#!/usr/bin/env python3
"""Writes one tiny random-weight model per chat template of the fixture set, for
the prompt-parity tests (library against llama-server on the same file).

Each model is the tiny test model (scripts/make-tiny-model.py) carrying one
template of Tests/Fixtures/chat-templates/templates as `tokenizer.chat_template`,
with a vocabulary fitted to it:

- BOS and EOS renamed to the template's own (`BOS_EOS` below, from the real
  model's tokenizer), so `{{ bos_token }}` prints the text the vocabulary
  knows as its BOS;
- every special-looking literal the template prints (`<|...|>`, `<｜...｜>`,
  `[INST]`-like, `<start_of_turn>`-like) added as a control token, so
  markup becomes control tokens as in the real model;
- `tokenizer.ggml.add_bos_token` set for every template (most of their real
  models add BOS), so that a template writing BOS itself meets a vocabulary
  that adds one: the case where a prompt could begin with two.

Both sides read the same file, so the vocabulary does not have to be the real
model's for the comparison to mean something: it has to give BOS and the
markup the same text as the real one.

Where scripts/fetch-vocab.sh has put llama.cpp's Llama 3 vocabulary, the Llama 3.x
and DeepSeek-R1-Distill-Llama templates are also written on it (`<name>@llama-bpe`),
so that a byte-level BPE vocabulary with its pre-tokenizer is compared too.

Usage: make-template-models.py OUTPUT_DIR [TEMPLATE_NAME ...]
Writes OUTPUT_DIR/<template name>.gguf (all templates when none is named) and
prints each name it wrote.
"""
import importlib.util
import os
import re
import sys

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "..", "Tests", "Fixtures", "chat-templates", "templates")
_spec = importlib.util.spec_from_file_location("tiny", os.path.join(HERE, "make-tiny-model.py"))
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)

# Template name prefix -> (BOS text, EOS text) of the real model's tokenizer.
BOS_EOS = [
    ("deepseek-ai-", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("llama-cpp-deepseek-r1", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("meta-llama-Llama-3", "<|begin_of_text|>", "<|eot_id|>"),
    ("NousResearch-Hermes-", "<|begin_of_text|>", "<|im_end|>"),
    ("fireworks-ai-llama-3", "<|begin_of_text|>", "<|eot_id|>"),
    ("meetkai-functionary", "<|begin_of_text|>", "<|eot_id|>"),
    ("google-gemma", "<bos>", "<end_of_turn>"),
    ("Cohere", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    ("Qwen", "<|endoftext|>", "<|im_end|>"),
    ("ibm-granite", "<|end_of_text|>", "<|end_of_text|>"),
]
DEFAULT_BOS_EOS = ("<s>", "</s>")

SPECIAL = re.compile(
    r"<\|[A-Za-z0-9_.:/\- ]{1,40}\|>"  # <|im_start|>
    r"|<｜[^｜<>\s'\"]{1,40}｜>"  # <｜User｜>
    r"|\[/?[A-Z][A-Z_]{1,30}\]"  # [INST]
    r"|<(?:start_of_turn|end_of_turn|bos|eos|think|/think|BOS_TOKEN)>"
)


def special_tokens(source):
    """The special-looking literals `source` prints, in first-seen order."""
    seen = []
    for match in SPECIAL.finditer(source):
        token = match.group(0)
        if token not in seen:
            seen.append(token)
    return seen


def bos_eos(name):
    for prefix, bos, eos in BOS_EOS:
        if name.startswith(prefix):
            return bos, eos
    return DEFAULT_BOS_EOS


def write(name, out):
    with open(os.path.join(TEMPLATES, name + ".jinja"), encoding="utf-8") as f:
        source = f.read()
    bos, eos = bos_eos(name)
    base_vocab = tiny.build_vocab

    def vocab():
        tokens, scores, types = base_vocab()
        # Slot 1 is the tiny vocabulary's BOS (<s>); slot 2 (</s>) becomes
        # EOS unless the vocabulary has that text already (<|im_end|>).
        tokens[1] = bos
        if eos not in tokens:
            tokens[2] = eos
        for token in special_tokens(source):
            if token not in tokens:
                tokens.append(token)
                scores.append(0.0)
                types.append(int(gguf.TokenType.CONTROL))
        return tokens, scores, types

    tokens = vocab()[0]

    def edit_kv(kv):
        T = gguf.GGUFValueType
        kv["tokenizer.chat_template"] = gguf.GGUFValue(value=source, type=T.STRING)
        kv["tokenizer.ggml.bos_token_id"] = gguf.GGUFValue(value=1, type=T.UINT32)
        kv["tokenizer.ggml.eos_token_id"] = gguf.GGUFValue(value=tokens.index(eos), type=T.UINT32)
        kv["tokenizer.ggml.eot_token_id"] = gguf.GGUFValue(value=tokens.index(eos), type=T.UINT32)
        kv["tokenizer.ggml.add_bos_token"] = gguf.GGUFValue(value=True, type=T.BOOL)

    tiny.build_vocab = vocab
    try:
        tiny.write_model(out, edit_kv=edit_kv)
    finally:
        tiny.build_vocab = base_vocab


# Templates also written on llama.cpp's Llama 3 vocabulary (a byte-level BPE with
# its pre-tokenizer, where the tiny one is SentencePiece), as <name>@llama-bpe.
LLAMA_BPE_TEMPLATES = [
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B",
    "meta-llama-Llama-3.1-8B-Instruct",
    "meta-llama-Llama-3.2-3B-Instruct",
    "meta-llama-Llama-3.3-70B-Instruct",
]


def vocab_dir():
    """$HI_MODELS/vocab, as scripts/common.sh names it (scripts/fetch-vocab.sh fills it)."""
    cache = os.environ.get("HYBRID_INFERENCE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "hybrid-inference")
    return os.path.join(cache, "models", "vocab")


def read_bpe(path):
    """The tokens, token types, merges and BOS/EOS ids of a vocabulary-only GGUF."""
    reader = gguf.GGUFReader(path)

    def strings(key):
        field = reader.fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    def scalar(key):
        field = reader.fields[key]
        return int(field.parts[field.data[0]][0])

    types = reader.fields["tokenizer.ggml.token_type"]
    return (strings("tokenizer.ggml.tokens"), [int(types.parts[i][0]) for i in types.data],
            strings("tokenizer.ggml.merges"), scalar("tokenizer.ggml.bos_token_id"),
            scalar("tokenizer.ggml.eos_token_id"))


def write_bpe(name, out, bpe):
    """`name`'s template on the Llama 3 vocabulary, BOS and EOS renamed to the
    template's where it has others (the DeepSeek distills rename Llama's)."""
    with open(os.path.join(TEMPLATES, name + ".jinja"), encoding="utf-8") as f:
        source = f.read()
    bos, eos = bos_eos(name)
    base_tokens, base_types, merges, bos_id, eos_id = bpe
    tokens, types = list(base_tokens), list(base_types)
    if bos not in tokens:
        tokens[bos_id] = bos
    if eos not in tokens:
        tokens[eos_id] = eos
    # (make-tiny-model.py looks <|im_end|> up; edit_kv names the real EOS.)
    for token in special_tokens(source) + ["<|im_end|>"]:
        if token not in tokens:
            tokens.append(token)
            types.append(int(gguf.TokenType.CONTROL))
    T = gguf.GGUFValueType

    def edit_kv(kv):
        kv["tokenizer.ggml.model"] = gguf.GGUFValue(value="gpt2", type=T.STRING)
        kv["tokenizer.ggml.pre"] = gguf.GGUFValue(value="llama-bpe", type=T.STRING)
        kv["tokenizer.ggml.scores"] = None
        kv["tokenizer.ggml.unknown_token_id"] = None
        kv["tokenizer.ggml.padding_token_id"] = None
        kv["tokenizer.ggml.add_space_prefix"] = None
        kv["tokenizer.ggml.merges"] = gguf.GGUFValue(value=merges, type=T.ARRAY, sub_type=T.STRING)
        kv["tokenizer.chat_template"] = gguf.GGUFValue(value=source, type=T.STRING)
        kv["tokenizer.ggml.bos_token_id"] = gguf.GGUFValue(value=tokens.index(bos), type=T.UINT32)
        kv["tokenizer.ggml.eos_token_id"] = gguf.GGUFValue(value=tokens.index(eos), type=T.UINT32)
        kv["tokenizer.ggml.eot_token_id"] = gguf.GGUFValue(value=tokens.index(eos), type=T.UINT32)
        kv["tokenizer.ggml.add_bos_token"] = gguf.GGUFValue(value=True, type=T.BOOL)

    base_vocab, base_embd = tiny.build_vocab, tiny.N_EMBD
    tiny.build_vocab = lambda: (tokens, [0.0] * len(tokens), types)
    # 16 wide rather than 64: the 128k-token embedding and output stay 8 MB each.
    tiny.N_EMBD = 16
    try:
        tiny.write_model(out, n_head=4, n_head_kv=2, head_dim=4, edit_kv=edit_kv)
    finally:
        tiny.build_vocab, tiny.N_EMBD = base_vocab, base_embd


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: make-template-models.py OUTPUT_DIR [TEMPLATE_NAME ...]")
    out_dir = sys.argv[1]
    names = sys.argv[2:] or sorted(
        f[: -len(".jinja")] for f in os.listdir(TEMPLATES) if f.endswith(".jinja"))
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        write(name, os.path.join(out_dir, name + ".gguf"))
        print(name)
    bpe_path = os.path.join(vocab_dir(), "ggml-vocab-llama-bpe.gguf")
    if os.path.exists(bpe_path):
        bpe = read_bpe(bpe_path)
        for name in [n for n in LLAMA_BPE_TEMPLATES if n in names]:
            write_bpe(name, os.path.join(out_dir, name + "@llama-bpe.gguf"), bpe)
            print(name + "@llama-bpe")


if __name__ == "__main__":
    main()
