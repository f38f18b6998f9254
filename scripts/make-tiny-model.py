#!/usr/bin/env python3
"""Writes a tiny random-weight llama-architecture GGUF (under 1 MB) for tests.

Deterministic: a fixed numpy seed and fixed metadata, so the output is byte-identical
on every run. Needs the `gguf` and `numpy` packages (see scripts/setup-python.sh).

Usage: make-tiny-model.py OUTPUT.gguf
"""
import os
import sys

import numpy as np
import gguf

N_EMBD = 64
N_LAYER = 2
N_HEAD = 4
N_HEAD_KV = 2
N_FF = 128
N_CTX = 2048
HEAD_DIM = N_EMBD // N_HEAD
SEED = 1234

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this "
    "have from or one had by word but not what all were we when your can said there "
    "use an each which she do how their if will up other about out many then them "
    "these so some her would make like him into time has look two more write go see "
    "number no way could people my than first water been call who oil its now find "
    "long down day did get come made may part hello world paris france capital answer "
    "question assistant user system yes test"
).split()


def build_vocab():
    T = gguf.TokenType
    tokens, scores, types = [], [], []

    def add(piece, score, ttype):
        tokens.append(piece)
        scores.append(float(score))
        types.append(int(ttype))

    add("<unk>", 0.0, T.UNKNOWN)
    add("<s>", 0.0, T.CONTROL)
    add("</s>", 0.0, T.CONTROL)
    add("<|im_start|>", 0.0, T.CONTROL)
    add("<|im_end|>", 0.0, T.CONTROL)
    for b in range(256):
        add(f"<0x{b:02X}>", 0.0, T.BYTE)

    seen = set(tokens)
    normal = []

    def add_normal(piece):
        if piece not in seen:
            seen.add(piece)
            normal.append(piece)

    add_normal("\u2581")
    for c in range(0x21, 0x7F):
        add_normal(chr(c))
    for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789":
        add_normal("\u2581" + c)
    for w in WORDS:
        # every prefix, so the SentencePiece-style pair merges can reach the full word
        for i in range(2, len(w) + 1):
            add_normal("\u2581" + w[:i])
    # Longer pieces score higher so merges prefer them.
    for i, piece in enumerate(normal):
        add(piece, -1000.0 + len(piece) * 10.0 - i * 0.001, T.NORMAL)
    return tokens, scores, types


def write_model(out, arch="llama", n_head=N_HEAD, n_head_kv=N_HEAD_KV, head_dim=HEAD_DIM,
                edit_vocab=None, edit_kv=None, tensor_shapes=None):
    """Writes the tiny model to `out`; the keyword arguments exist so that
    scripts/make-crafted-models.py can write deliberately broken variants.

    edit_vocab(tokens, scores, types) may change the three lists in place;
    edit_kv(kv) may change the metadata dict (key -> gguf.GGUFValue) in place,
    where a key of None deletes; tensor_shapes maps a tensor name to the numpy
    shape it gets instead of the one the hyper-parameters imply.
    """
    tokens, scores, types = build_vocab()
    n_vocab = len(tokens)
    if edit_vocab:
        edit_vocab(tokens, scores, types)
    rng = np.random.default_rng(SEED)
    shapes = tensor_shapes or {}

    def w(name, *shape, std=0.02):
        shape = shapes.get(name, shape)
        return (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float32)

    def ones(name):
        return np.ones(shapes.get(name, (N_EMBD,)), dtype=np.float32)

    tmp = out + ".tmp"
    writer = gguf.GGUFWriter(tmp, arch)
    writer.add_name("tiny-random-llama")
    writer.add_description("Tiny random-weight llama model for tests; output is meaningless.")
    writer.add_license("apache-2.0")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    im_end = tokens.index("<|im_end|>")
    writer.add_eos_token_id(im_end)
    writer.add_eot_token_id(im_end)
    writer.add_pad_token_id(2)
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(False)
    writer.add_chat_template(CHATML_TEMPLATE)
    if edit_kv:
        kv = writer.kv_data[0]
        edit_kv(kv)
        for key in [key for key, value in kv.items() if value is None]:
            del kv[key]

    # numpy shapes are (rows=out, cols=in); GGUF stores them reversed as ne[0]=in.
    writer.add_tensor("token_embd.weight", w("token_embd.weight", n_vocab, N_EMBD, std=1.0))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        writer.add_tensor(p + "attn_norm.weight", ones(p + "attn_norm.weight"))
        writer.add_tensor(p + "attn_q.weight", w(p + "attn_q.weight", n_head * head_dim, N_EMBD))
        writer.add_tensor(p + "attn_k.weight", w(p + "attn_k.weight", n_head_kv * head_dim, N_EMBD))
        writer.add_tensor(p + "attn_v.weight", w(p + "attn_v.weight", n_head_kv * head_dim, N_EMBD))
        writer.add_tensor(p + "attn_output.weight", w(p + "attn_output.weight", N_EMBD, n_head * head_dim))
        writer.add_tensor(p + "ffn_norm.weight", ones(p + "ffn_norm.weight"))
        writer.add_tensor(p + "ffn_gate.weight", w(p + "ffn_gate.weight", N_FF, N_EMBD))
        writer.add_tensor(p + "ffn_up.weight", w(p + "ffn_up.weight", N_FF, N_EMBD))
        writer.add_tensor(p + "ffn_down.weight", w(p + "ffn_down.weight", N_EMBD, N_FF))
    writer.add_tensor("output_norm.weight", ones("output_norm.weight"))
    writer.add_tensor("output.weight", w("output.weight", n_vocab, N_EMBD, std=0.5))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, out)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-tiny-model.py OUTPUT.gguf")
    write_model(sys.argv[1])


if __name__ == "__main__":
    main()
