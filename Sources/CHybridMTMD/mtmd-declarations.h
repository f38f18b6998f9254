// The part of llama.cpp's libmtmd (tools/mtmd: mtmd.h, mtmd-helper.h) that
// CHybridMTMD.c calls, declared here rather than included: the library finds
// libmtmd at run time and builds where its headers are absent (a llama.cpp
// from a distribution may have none). What these say must be what the pinned
// headers say: scripts/check-mtmd-declarations.sh compiles them beside the
// installed mtmd.h and fails on any difference in a prototype or a layout.
#ifndef C_HYBRID_MTMD_DECLARATIONS_H
#define C_HYBRID_MTMD_DECLARATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Opaque: only libmtmd and libllama look inside.
struct mtmd_context;
struct mtmd_bitmap;
struct mtmd_input_chunk;
struct mtmd_input_chunks;
struct llama_model;
struct llama_context;
struct ggml_tensor;
struct ggml_backend_device;
struct mtmd_helper_video;

// struct mtmd_context_params, field for field. ggml_backend_dev_t is a
// struct ggml_backend_device *; enum llama_flash_attn_type (-1, 0, 1) is an
// int; the callbacks are ggml_backend_sched_eval_callback and
// mtmd_progress_callback.
struct CHybridMTMD_mirror_context_params {
  bool use_gpu;
  struct ggml_backend_device *device;
  bool print_timings;
  int n_threads;
  const char *image_marker;
  const char *media_marker;
  int flash_attn_type;
  bool warmup;
  int image_min_tokens;
  int image_max_tokens;
  bool (*cb_eval)(struct ggml_tensor *t, bool ask, void *user_data);
  void *cb_eval_user_data;
  int32_t batch_max_tokens;
  bool (*progress_callback)(float progress, void *user_data);
  void *progress_callback_user_data;
};

// struct mtmd_input_text, field for field.
struct CHybridMTMD_mirror_input_text {
  const char *text;
  size_t text_len;
  bool add_special;
  bool parse_special;
};

// struct mtmd_helper_video_init_params, field for field.
struct CHybridMTMD_mirror_video_init_params {
  float fps_target;
  const char *ffmpeg_bin_dir;
  int64_t timestamp_interval_ms;
};

// struct mtmd_helper_init_opt, field for field.
struct CHybridMTMD_mirror_init_opt {
  struct CHybridMTMD_mirror_video_init_params video_params;
};

// struct mtmd_helper_bitmap_wrapper, field for field.
struct CHybridMTMD_mirror_bitmap_wrapper {
  struct mtmd_bitmap *bitmap;
  struct mtmd_helper_video *video_ctx;
};

// ggml_log_callback, whose level is an enum ggml_log_level (0...5): an int
// in every ABI the library builds for.
typedef void (*CHybridMTMD_mirror_log_callback)(int level, const char *text, void *user_data);

// The types the prototypes below use; the check defines them as the real
// ones (struct mtmd_context_params, ...) before including this header, so
// that each prototype is compared with the real one as it stands.
#ifndef CHYBRID_MTMD_CONTEXT_PARAMS
#define CHYBRID_MTMD_CONTEXT_PARAMS struct CHybridMTMD_mirror_context_params
#endif
#ifndef CHYBRID_MTMD_INPUT_TEXT
#define CHYBRID_MTMD_INPUT_TEXT struct CHybridMTMD_mirror_input_text
#endif
#ifndef CHYBRID_MTMD_INIT_OPT
#define CHYBRID_MTMD_INIT_OPT struct CHybridMTMD_mirror_init_opt
#endif
#ifndef CHYBRID_MTMD_BITMAP_WRAPPER
#define CHYBRID_MTMD_BITMAP_WRAPPER struct CHybridMTMD_mirror_bitmap_wrapper
#endif
#ifndef CHYBRID_MTMD_CHUNK_TYPE
#define CHYBRID_MTMD_CHUNK_TYPE int
#endif
#ifndef CHYBRID_MTMD_LOG_CALLBACK
#define CHYBRID_MTMD_LOG_CALLBACK CHybridMTMD_mirror_log_callback
#endif

// Every function looked up: X(return type, name, parameter list). llama_pos
// and llama_seq_id are int32_t.
#define CHYBRID_MTMD_FUNCTIONS(X)                                                                               \
  X(const char *, mtmd_default_marker, (void))                                                                  \
  X(CHYBRID_MTMD_CONTEXT_PARAMS, mtmd_context_params_default, (void))                                           \
  X(struct mtmd_context *, mtmd_init_from_file,                                                                 \
    (const char *mmproj_fname, const struct llama_model *text_model, const CHYBRID_MTMD_CONTEXT_PARAMS params)) \
  X(void, mtmd_free, (struct mtmd_context * ctx))                                                               \
  X(bool, mtmd_decode_use_non_causal, (const struct mtmd_context *ctx, const struct mtmd_input_chunk *chunk))   \
  X(bool, mtmd_decode_use_mrope, (const struct mtmd_context *ctx))                                              \
  X(bool, mtmd_support_vision, (const struct mtmd_context *ctx))                                                \
  X(bool, mtmd_support_audio, (const struct mtmd_context *ctx))                                                 \
  X(const char *, mtmd_get_marker, (const struct mtmd_context *ctx))                                            \
  X(struct mtmd_bitmap *, mtmd_bitmap_init, (uint32_t nx, uint32_t ny, const unsigned char *data))              \
  X(void, mtmd_bitmap_set_id, (struct mtmd_bitmap * bitmap, const char *id))                                    \
  X(void, mtmd_bitmap_free, (struct mtmd_bitmap * bitmap))                                                      \
  X(bool, mtmd_bitmap_is_audio, (const struct mtmd_bitmap *bitmap))                                             \
  X(struct mtmd_input_chunks *, mtmd_input_chunks_init, (void))                                                 \
  X(size_t, mtmd_input_chunks_size, (const struct mtmd_input_chunks *chunks))                                   \
  X(void, mtmd_input_chunks_free, (struct mtmd_input_chunks * chunks))                                          \
  X(int32_t, mtmd_tokenize,                                                                                     \
    (const struct mtmd_context *ctx, struct mtmd_input_chunks *output, const CHYBRID_MTMD_INPUT_TEXT *text,     \
     const struct mtmd_bitmap *const *bitmaps, size_t n_bitmaps))                                               \
  X(const struct mtmd_input_chunk *, mtmd_input_chunks_get, (const struct mtmd_input_chunks *chunks, size_t idx)) \
  X(CHYBRID_MTMD_CHUNK_TYPE, mtmd_input_chunk_get_type, (const struct mtmd_input_chunk *chunk))               \
  X(const int32_t *, mtmd_input_chunk_get_tokens_text,                                                          \
    (const struct mtmd_input_chunk *chunk, size_t *n_tokens_output))                                            \
  X(size_t, mtmd_input_chunk_get_n_tokens, (const struct mtmd_input_chunk *chunk))                              \
  X(const char *, mtmd_input_chunk_get_id, (const struct mtmd_input_chunk *chunk))                              \
  X(int32_t, mtmd_input_chunk_get_n_pos, (const struct mtmd_input_chunk *chunk))                                \
  X(size_t, mtmd_helper_get_n_tokens, (const struct mtmd_input_chunks *chunks))                                 \
  X(int32_t, mtmd_helper_get_n_pos, (const struct mtmd_input_chunks *chunks))                                   \
  X(int32_t, mtmd_helper_eval_chunk_single,                                                                     \
    (struct mtmd_context * ctx, struct llama_context * lctx, const struct mtmd_input_chunk *chunk,              \
     int32_t n_past, int32_t seq_id, int32_t n_batch, bool logits_last, int32_t *new_n_past))                   \
  X(CHYBRID_MTMD_INIT_OPT, mtmd_helper_init_opt_default, (void))                                               \
  X(CHYBRID_MTMD_BITMAP_WRAPPER, mtmd_helper_bitmap_init_from_buf,                                              \
    (const struct mtmd_context *ctx, const unsigned char *buf, size_t len, bool placeholder,                    \
     CHYBRID_MTMD_INIT_OPT opt))                                                                                \
  X(void, mtmd_helper_video_free, (struct mtmd_helper_video * ctx))                                             \
  X(void, mtmd_helper_log_set, (CHYBRID_MTMD_LOG_CALLBACK log_callback, void *user_data))

#endif
