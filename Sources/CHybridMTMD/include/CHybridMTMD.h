// llama.cpp's multimodal library, libmtmd (tools/mtmd), reached without
// linking it: a llama.cpp from a distribution or Homebrew may come without
// libmtmd, and the library must still load there and serve text. libmtmd is
// opened with dlopen when a projector is first loaded, and its functions are
// looked up by name (dlsym) into a table; a process where it is missing gets
// the reason, never a failed start.
//
// The functions below take the table (a CHybridMTMD_library from
// CHybridMTMD_open) and forward to libmtmd. Their types are this module's own:
// libmtmd's structures stay in CHybridMTMD.c, whose declarations of them
// (mtmd-declarations.h) scripts/check-mtmd-declarations.sh compares with the
// installed mtmd.h.
#ifndef C_HYBRID_MTMD_H
#define C_HYBRID_MTMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// libllama's, as llama.h names them (incomplete here, as there).
struct llama_model;
struct llama_context;

// An opened libmtmd and its functions; never freed (libmtmd stays loaded for
// the process, as its contexts may outlive any one caller).
typedef struct CHybridMTMD_library CHybridMTMD_library;
// libmtmd's own objects, opaque.
typedef struct mtmd_context CHybridMTMD_context;
typedef struct mtmd_bitmap CHybridMTMD_bitmap;
typedef struct mtmd_input_chunks CHybridMTMD_chunks;

// Opens libmtmd and looks up every function this module calls.
//
// With directory (not NULL), only that directory is tried: libmtmd.so.0, then
// libmtmd.so (on Darwin libmtmd.0.dylib, libmtmd.dylib). Without it, the
// directory of the libllama the process has loaded, then the dynamic loader's
// own search: a libmtmd beside libllama is the one built with it.
//
// Returns the table, or NULL with the reason written to reason (at most
// reason_size bytes, NUL-terminated; reason may be NULL).
CHybridMTMD_library *CHybridMTMD_open(const char *directory, char *reason, size_t reason_size);

// The path of the libmtmd file a table was opened from, as the loader names it.
const char *CHybridMTMD_library_path(const CHybridMTMD_library *library);

// The marker that stands for one image or sound in a prompt ("<__media__>").
const char *CHybridMTMD_default_marker(const CHybridMTMD_library *library);

// How a projector is loaded.
typedef struct CHybridMTMD_options {
  // Run the encoder on a GPU backend where llama.cpp has one.
  bool use_gpu;
  // Threads for encoding images.
  int32_t threads;
  // Encode one image of the projector's size at load, to size its buffers.
  bool warmup;
  // Flash attention in the encoder: -1 automatic, 0 off, 1 on.
  int32_t flash_attention;
  // Called as the projector loads with a fraction done; returning false
  // stops the load (the result is then NULL). NULL: no reports.
  bool (*progress)(float fraction, void *user_data);
  void *progress_user_data;
} CHybridMTMD_options;

// Loads the projector at path (an mmproj GGUF) for model; NULL when libmtmd
// refuses it (its reason goes to libmtmd's log). Timings are not printed.
CHybridMTMD_context *CHybridMTMD_init(const CHybridMTMD_library *library, const char *path,
                                      const struct llama_model *model, CHybridMTMD_options options);

// Frees a context from CHybridMTMD_init; NULL is ignored.
void CHybridMTMD_free(const CHybridMTMD_library *library, CHybridMTMD_context *context);

// Whether the projector reads images; sounds.
bool CHybridMTMD_supports_vision(const CHybridMTMD_library *library, const CHybridMTMD_context *context);
bool CHybridMTMD_supports_audio(const CHybridMTMD_library *library, const CHybridMTMD_context *context);

// The marker the context replaces with media in a prompt.
const char *CHybridMTMD_marker(const CHybridMTMD_library *library, const CHybridMTMD_context *context);

// Whether the text model decodes media tokens without a causal mask; whether
// it uses M-RoPE positions (then a chunk's positions are not its token count).
bool CHybridMTMD_decode_non_causal(const CHybridMTMD_library *library, const CHybridMTMD_context *context);
bool CHybridMTMD_decode_mrope(const CHybridMTMD_library *library, const CHybridMTMD_context *context);

// An image of width x height pixels from rgb, width * height * 3 bytes
// (R, G, B, row by row), copied; NULL on failure. id (may be NULL) names it
// for the prompt cache. Free it with CHybridMTMD_bitmap_free.
CHybridMTMD_bitmap *CHybridMTMD_bitmap_rgb(const CHybridMTMD_library *library, uint32_t width, uint32_t height,
                                           const unsigned char *rgb, const char *id);
void CHybridMTMD_bitmap_free(const CHybridMTMD_library *library, CHybridMTMD_bitmap *bitmap);

// An image decoded from length bytes of its file (JPEG, PNG, GIF, BMP) by
// libmtmd's own decoder (stb_image); NULL when they do not decode as one.
// The bitmap's id is the bytes' SHA-256. Only for bytes already checked
// (the library's ImageCheck): the decoder trusts its input. libmtmd hands
// bytes stb_image does not decode to ffmpeg; here its directory is one no
// program can be in ("/dev/null"), so no subprocess ever starts, and a
// video or sound it made instead is freed and refused (NULL).
CHybridMTMD_bitmap *CHybridMTMD_bitmap_decode(const CHybridMTMD_library *library, const CHybridMTMD_context *context,
                                              const unsigned char *bytes, size_t length);

// An empty list of chunks, for CHybridMTMD_tokenize; free it with
// CHybridMTMD_chunks_free.
CHybridMTMD_chunks *CHybridMTMD_chunks_new(const CHybridMTMD_library *library);
void CHybridMTMD_chunks_free(const CHybridMTMD_library *library, CHybridMTMD_chunks *chunks);
// The chunks' count; their tokens; the positions they take in the context.
size_t CHybridMTMD_chunks_count(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks);
size_t CHybridMTMD_chunks_tokens(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks);
int32_t CHybridMTMD_chunks_positions(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks);

// Chunk index of chunks (index < CHybridMTMD_chunks_count): its kind (0
// text, 1 image, 2 sound; -1 past the end); its text tokens, count written
// to count (NULL, count 0, for media), owned by chunks; its id (an image's
// bitmap id; NULL for text or an image without one), owned by chunks; the
// tokens and the positions it takes.
int32_t CHybridMTMD_chunk_kind(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks, size_t index);
const int32_t *CHybridMTMD_chunk_text(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks,
                                      size_t index, size_t *count);
const char *CHybridMTMD_chunk_id(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks, size_t index);
size_t CHybridMTMD_chunk_tokens(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks, size_t index);
int32_t CHybridMTMD_chunk_positions(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks,
                                    size_t index);

// Splits text (text_length bytes) into chunks of text and media, one bitmap
// for each marker in order. Returns 0; 1 when the markers and bitmaps differ
// in number; 2 when an image could not be prepared.
int32_t CHybridMTMD_tokenize(const CHybridMTMD_library *library, const CHybridMTMD_context *context,
                             CHybridMTMD_chunks *output, const char *text, size_t text_length, bool add_special,
                             bool parse_special, const CHybridMTMD_bitmap *const *bitmaps, size_t bitmap_count);

// Decodes chunks, from chunk first_chunk on (the earlier ones are in the
// sequence already), into sequence sequence of llama_context, from position
// first_position, at most batch_size tokens a decode; encodes each image
// first. Each chunk is decoded by libmtmd's helper
// (mtmd_helper_eval_chunk_single), logits only for the last chunk's last
// token when logits_last. Writes the position after the last to
// next_position. Returns 0 (nothing decoded when first_chunk is the count
// or past it), or libmtmd's or llama_decode's failure. Not thread-safe on one
// context.
int32_t CHybridMTMD_evaluate_from(const CHybridMTMD_library *library, CHybridMTMD_context *context,
                                  struct llama_context *llama_context, const CHybridMTMD_chunks *chunks,
                                  size_t first_chunk, int32_t first_position, int32_t sequence, int32_t batch_size,
                                  bool logits_last, int32_t *next_position);

// Where libmtmd's log lines (and its image encoder's) go: callback(level,
// text, user_data), level as ggml_log_level (2 info, 3 warning, 4 error, 5
// continuation, 1 debug). NULL: libmtmd's own default, standard error.
typedef void (*CHybridMTMD_log_callback)(int level, const char *text, void *user_data);
void CHybridMTMD_log_set(const CHybridMTMD_library *library, CHybridMTMD_log_callback callback, void *user_data);

#endif
