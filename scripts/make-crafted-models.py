#!/usr/bin/env python3
"""Writes deliberately broken variants of the tiny test model, one per kind.

Each file is a structurally valid GGUF (header, metadata and tensor table all in
bounds) whose contents break an assumption of llama.cpp's loader: the cases the
library must refuse before llama.cpp sees the file. The tests read them from the
directory this script fills (ModelFileContentTests).

Usage: make-crafted-models.py OUTPUT_DIR   (writes OUTPUT_DIR/<kind>.gguf, prints the kinds)
"""
import importlib.util
import os
import sys

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("tiny", os.path.join(HERE, "make-tiny-model.py"))
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)

T = gguf.GGUFValueType


def u32(value):
    return gguf.GGUFValue(value=value, type=T.UINT32)


def string(value):
    return gguf.GGUFValue(value=value, type=T.STRING)


def u32_array(values):
    return gguf.GGUFValue(value=values, type=T.ARRAY, sub_type=T.UINT32)


def set_kv(**pairs):
    """An edit_kv that sets `llama.<key>` (dots written as __) to each value."""

    def edit(kv):
        for key, value in pairs.items():
            kv[key.replace("__", ".")] = value

    return edit


def duplicate_token(tokens, scores, types):
    tokens[300] = tokens[301]


def short_scores(tokens, scores, types):
    del scores[len(scores) // 2:]


def short_types(tokens, scores, types):
    del types[10:]


def rename_arch(kv):
    kv["general.architecture"] = string("tinyllama-from-the-future")


VOCAB = len(tiny.build_vocab()[0])
HEAD_DIM = tiny.HEAD_DIM

# kind -> keyword arguments of make-tiny-model.write_model
KINDS = {
    # hyper-parameters llama.cpp asserts on in llama_model_base::load_hparams
    "expert-used-without-experts": dict(edit_kv=set_kv(llama__expert_count=u32(0), llama__expert_used_count=u32(4))),
    "expert-used-over-count": dict(edit_kv=set_kv(llama__expert_count=u32(2), llama__expert_used_count=u32(4))),
    "expert-count-too-large": dict(edit_kv=set_kv(llama__expert_count=u32(4096), llama__expert_used_count=u32(2))),
    "expert-groups-without-experts": dict(edit_kv=set_kv(llama__expert_group_count=u32(2))),
    "block-count-zero": dict(edit_kv=set_kv(llama__block_count=u32(0))),
    "block-count-too-large": dict(edit_kv=set_kv(llama__block_count=u32(100000))),
    "nextn-layers-over-block-count": dict(edit_kv=set_kv(llama__nextn_predict_layers=u32(5))),
    "rope-scaling-unknown": dict(edit_kv=set_kv(llama__rope__scaling__type=string("bogus"))),
    "context-length-zero": dict(edit_kv=set_kv(llama__context_length=u32(0))),
    # attention geometry that the loader accepts but the graph asserts on
    "head-count-zero": dict(edit_kv=set_kv(llama__attention__head_count=u32(0))),
    "head-count-kv-not-dividing": dict(n_head_kv=3),
    "head-count-kv-array-with-zero": dict(edit_kv=set_kv(llama__attention__head_count_kv=u32_array([2, 0]))),
    "head-count-array-wrong-length": dict(edit_kv=set_kv(llama__attention__head_count=u32_array([4, 4, 4]))),
    "key-value-length-differ": dict(
        edit_kv=set_kv(llama__attention__key_length=u32(HEAD_DIM), llama__attention__value_length=u32(HEAD_DIM // 2)),
        tensor_shapes={f"blk.{i}.attn_v.weight": (tiny.N_HEAD_KV * HEAD_DIM // 2, tiny.N_EMBD) for i in range(tiny.N_LAYER)},
    ),
    "embedding-not-divisible-by-heads": dict(n_head=5, n_head_kv=5, head_dim=tiny.N_EMBD // 5),
    # vocabulary
    "vocab-duplicate-token": dict(edit_vocab=duplicate_token),
    "vocab-scores-shorter": dict(edit_vocab=short_scores),
    "vocab-types-shorter": dict(edit_vocab=short_types),
    "special-token-out-of-range": dict(edit_kv=set_kv(tokenizer__ggml__bos_token_id=u32(VOCAB + 1000))),
    "eos-token-out-of-range": dict(edit_kv=set_kv(tokenizer__ggml__eos_token_id=u32(VOCAB))),
    "tokenizer-unknown": dict(edit_kv=set_kv(tokenizer__ggml__model=string("klingon"))),
    # tensors and architecture
    "tensor-shape-mismatch": dict(tensor_shapes={"blk.1.attn_q.weight": (tiny.N_EMBD, tiny.N_EMBD // 2)}),
    "embedding-rows-not-vocab": dict(tensor_shapes={"token_embd.weight": (VOCAB - 7, tiny.N_EMBD)}),
    "architecture-unknown": dict(arch="tinyllama-from-the-future"),
}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-crafted-models.py OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for kind, arguments in KINDS.items():
        tiny.write_model(os.path.join(out_dir, kind + ".gguf"), **arguments)
        print(kind)


if __name__ == "__main__":
    main()
