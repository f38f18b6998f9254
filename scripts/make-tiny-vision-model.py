#!/usr/bin/env python3
"""Writes a tiny random-weight vision model for tests: a text model and its projector.

The text model is the tiny llama of make-tiny-model.py under another name; the
projector is a LLaVA-style one (clip.projector_type "mlp"): a two-layer ViT over
a 28x28 image in 14x14 patches (4 image tokens), then a two-layer MLP into the
text model's embedding width. libmtmd (llama.cpp's tools/mtmd) loads it as it
loads LLaVA 1.5's mmproj, with no special tokens in the text vocabulary. The
answers are meaningless; the files exist to exercise loading, tokenizing and
evaluating an image.

Deterministic: a fixed numpy seed and fixed metadata, so the output is
byte-identical on every run. Needs the `gguf` and `numpy` packages (see
scripts/setup-python.sh).

Usage: make-tiny-vision-model.py TEXT_MODEL.gguf PROJECTOR.gguf
"""
import importlib.util
import os
import sys

import numpy as np
import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("tiny", os.path.join(HERE, "make-tiny-model.py"))
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)

IMAGE_SIZE = 28
PATCH_SIZE = 14
V_EMBD = 32
V_HEAD = 2
V_FF = 48  # unlike V_EMBD: clip.cpp swaps ffn up/down of old files whose down width is n_embd
V_LAYER = 2  # a LLaVA projector reads the second-to-last layer: one runs
MM_HIDDEN = 64
SEED = 4321


def write_text_model(out):
    def rename(kv):
        kv[gguf.Keys.General.NAME] = gguf.GGUFValue(value="tiny-random-llava", type=gguf.GGUFValueType.STRING)

    tiny.write_model(out, edit_kv=rename)


def write_projector(out):
    rng = np.random.default_rng(SEED)
    n_patches = (IMAGE_SIZE // PATCH_SIZE) ** 2

    def w(*shape, std=0.02):
        return (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float32)

    def ones(n):
        return np.ones((n,), dtype=np.float32)

    def zeros(n):
        return np.zeros((n,), dtype=np.float32)

    tmp = out + ".tmp"
    writer = gguf.GGUFWriter(tmp, "clip")
    writer.add_name("tiny-random-llava-mmproj")
    writer.add_description("Tiny random-weight LLaVA-style projector for tests; output is meaningless.")
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_string("clip.projector_type", "mlp")
    writer.add_bool("clip.has_vision_encoder", True)
    writer.add_bool("clip.has_audio_encoder", False)
    writer.add_bool("clip.use_gelu", True)
    writer.add_uint32("clip.vision.image_size", IMAGE_SIZE)
    writer.add_uint32("clip.vision.patch_size", PATCH_SIZE)
    writer.add_uint32("clip.vision.embedding_length", V_EMBD)
    writer.add_uint32("clip.vision.feed_forward_length", V_FF)
    writer.add_uint32("clip.vision.block_count", V_LAYER)
    writer.add_uint32("clip.vision.projection_dim", tiny.N_EMBD)
    writer.add_uint32("clip.vision.attention.head_count", V_HEAD)
    writer.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-5)
    writer.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    writer.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])

    # numpy shapes are (rows=out, cols=in); GGUF stores them reversed as ne[0]=in.
    writer.add_tensor("v.patch_embd.weight", w(V_EMBD, 3, PATCH_SIZE, PATCH_SIZE))
    writer.add_tensor("v.patch_embd.bias", zeros(V_EMBD))
    writer.add_tensor("v.position_embd.weight", w(n_patches, V_EMBD))
    writer.add_tensor("v.pre_ln.weight", ones(V_EMBD))
    writer.add_tensor("v.pre_ln.bias", zeros(V_EMBD))
    for i in range(V_LAYER):
        p = f"v.blk.{i}."
        for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
            writer.add_tensor(p + name + ".weight", w(V_EMBD, V_EMBD))
            writer.add_tensor(p + name + ".bias", zeros(V_EMBD))
        for name in ("ln1", "ln2"):
            writer.add_tensor(p + name + ".weight", ones(V_EMBD))
            writer.add_tensor(p + name + ".bias", zeros(V_EMBD))
        writer.add_tensor(p + "ffn_up.weight", w(V_FF, V_EMBD))
        writer.add_tensor(p + "ffn_up.bias", zeros(V_FF))
        writer.add_tensor(p + "ffn_down.weight", w(V_EMBD, V_FF))
        writer.add_tensor(p + "ffn_down.bias", zeros(V_EMBD))
    writer.add_tensor("mm.0.weight", w(MM_HIDDEN, V_EMBD))
    writer.add_tensor("mm.0.bias", zeros(MM_HIDDEN))
    writer.add_tensor("mm.2.weight", w(tiny.N_EMBD, MM_HIDDEN, std=0.5))
    writer.add_tensor("mm.2.bias", zeros(tiny.N_EMBD))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make-tiny-vision-model.py TEXT_MODEL.gguf PROJECTOR.gguf")
    write_text_model(sys.argv[1])
    write_projector(sys.argv[2])


if __name__ == "__main__":
    main()
