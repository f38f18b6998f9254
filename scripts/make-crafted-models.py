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
import struct
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


def drop_high_byte_tokens(tokens, scores, types):
    """Renames <0x80>...<0xFF> (a SentencePiece vocab without byte fallback for
    non-ASCII text): llama.cpp throws std::out_of_range on the first such byte."""
    for b in range(0x80, 0x100):
        index = tokens.index(f"<0x{b:02X}>")
        tokens[index] = f"byte-{b:02x}"
        types[index] = int(gguf.TokenType.NORMAL)


def u8_array(data):
    return gguf.GGUFValue(value=list(data), type=T.ARRAY, sub_type=T.UINT8)


def broken_charsmap():
    """A T5 charsmap whose trie has 16 nodes: the walk for '\n' (the only text
    llama.cpp tokenizes at load) stays inside it, any byte from 16 up leaves it,
    and llama.cpp throws "Index out of array bounds in XCDA array!" at run time."""
    nodes = bytes(16 * 4)  # all zero: the root's base is 0, no node is a child
    return u8_array(len(nodes).to_bytes(4, "little") + nodes + b"\0")


def u64(value):
    return gguf.GGUFValue(value=value, type=T.UINT64)


def u16(value):
    return gguf.GGUFValue(value=value, type=T.UINT16)


def tensor_offset_field(data, index=0):
    """The byte position of tensor `index`'s data-offset field in GGUF bytes."""
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def string(pos):
        (length,) = struct.unpack_from("<Q", data, pos)
        return pos + 8 + length

    def value(pos, kind):
        if kind == 8:
            return string(pos)
        if kind == 9:
            sub, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            if sub != 8:
                return pos + sizes[sub] * count
            for _ in range(count):
                pos = string(pos)
            return pos
        return pos + sizes[kind]

    n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
    pos = 24
    for _ in range(n_kv):
        pos = string(pos)
        (kind,) = struct.unpack_from("<I", data, pos)
        pos = value(pos + 4, kind)
    for i in range(n_tensors):
        pos = string(pos)
        (n_dims,) = struct.unpack_from("<I", data, pos)
        pos += 4 + 8 * n_dims + 4
        if i == index:
            return pos
        pos += 8
    raise ValueError("no tensor %d" % index)


def set_tensor_offset(offset, index=0):
    """A patch that writes `offset` into tensor `index`'s data offset."""

    def patch(path):
        with open(path, "r+b") as f:
            data = f.read()
            f.seek(tensor_offset_field(data, index))
            f.write(struct.pack("<Q", offset))

    return patch


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
    # vocabularies that load but make tokenizing throw or assert at run time
    "spm-byte-tokens-missing": dict(edit_vocab=drop_high_byte_tokens),
    "t5-charsmap-out-of-bounds": dict(
        edit_kv=set_kv(tokenizer__ggml__model=string("t5"), tokenizer__ggml__precompiled_charsmap=broken_charsmap())),
    "bos-added-but-missing": dict(
        edit_kv=set_kv(tokenizer__ggml__model=string("t5"), tokenizer__ggml__add_bos_token=gguf.GGUFValue(
            value=True, type=T.BOOL), tokenizer__ggml__bos_token_id=None)),
    # tensors and architecture
    "tensor-shape-mismatch": dict(tensor_shapes={"blk.1.attn_q.weight": (tiny.N_EMBD, tiny.N_EMBD // 2)}),
    "embedding-rows-not-vocab": dict(tensor_shapes={"token_embd.weight": (VOCAB - 7, tiny.N_EMBD)}),
    "architecture-unknown": dict(arch="tinyllama-from-the-future"),
    # arithmetic on header numbers: each of these traps an unchecked reader
    # (an Int overflow); the tests read them in a
    # child process (HostileInputTests)
    "tensor-offset-near-int-max": dict(patch=set_tensor_offset(0x7FFF_FFFF_FFFF_FFE0)),
    "attention-widths-overflow": dict(edit_kv=set_kv(
        llama__attention__key_length=u32(0xFFFF_FFFF), llama__attention__value_length=u32(0xFFFF_FFFF),
        llama__rope__dimension_count=u32(0xFFFF_FFFF), llama__attention__head_count=u32(0xC000_0000),
        llama__attention__head_count_kv=u32(0xC000_0000))),
    # a layout llama.cpp refuses, and a model whose other parts no check reads
    "alignment-not-uint32": dict(edit_kv=set_kv(general__alignment=u64(32))),
    "split-in-two": dict(edit_kv=set_kv(split__count=u16(2), split__no=u16(0), split__tensors__count=gguf.GGUFValue(
        value=21, type=T.INT32))),
}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-crafted-models.py OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for kind, arguments in KINDS.items():
        arguments = dict(arguments)
        patch = arguments.pop("patch", None)
        path = os.path.join(out_dir, kind + ".gguf")
        tiny.write_model(path, **arguments)
        if patch:
            patch(path)
        print(kind)


if __name__ == "__main__":
    main()
