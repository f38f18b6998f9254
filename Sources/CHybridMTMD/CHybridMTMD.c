// _GNU_SOURCE: glibc declares dladdr and RTLD_DEFAULT only with it.
#define _GNU_SOURCE
#include "CHybridMTMD.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtmd-declarations.h"

// The file names tried in a directory, and on the loader's search path: the
// versioned name first, which is the one libllama's own links use.
#if defined(__APPLE__)
static const char *const library_names[] = {"libmtmd.0.dylib", "libmtmd.dylib"};
#else
static const char *const library_names[] = {"libmtmd.so.0", "libmtmd.so"};
#endif
enum { library_name_count = sizeof library_names / sizeof library_names[0] };

// A directory and a file name with a slash between; longer paths are not tried.
enum { path_capacity = 4096 };

// One pointer for each function of CHYBRID_MTMD_FUNCTIONS, by its own name.
#define CHYBRID_MTMD_FIELD(result, name, parameters) result(*name) parameters;
struct CHybridMTMD_library {
  void *handle;
  char path[path_capacity];
  struct {
    CHYBRID_MTMD_FUNCTIONS(CHYBRID_MTMD_FIELD)
  } call;
};
#undef CHYBRID_MTMD_FIELD

static void set_reason(char *reason, size_t reason_size, const char *format, const char *first, const char *second) {
  if (reason == NULL || reason_size == 0) return;
  (void)snprintf(reason, reason_size, format, first, second);
}

// dlopen of directory/name for each name (directory NULL: the bare name, for
// the loader's search), the path opened written to opened (path_capacity
// bytes); NULL with the last dlerror in error when none opens.
static void *open_in(const char *directory, char *opened, char *error, size_t error_size) {
  for (size_t index = 0; index < library_name_count; index++) {
    char path[path_capacity];
    int length = directory == NULL ? snprintf(path, sizeof path, "%s", library_names[index])
                                   : snprintf(path, sizeof path, "%s/%s", directory, library_names[index]);
    if (length < 0 || (size_t)length >= sizeof path) {
      (void)snprintf(error, error_size, "the path in %s is too long", directory == NULL ? "?" : directory);
      continue;
    }
    // RTLD_LOCAL: its symbols stay out of the process's namespace; libmtmd
    // finds libllama by its own links (the copy already loaded).
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) {
      memcpy(opened, path, (size_t)length + 1);
      return handle;
    }
    const char *why = dlerror();
    (void)snprintf(error, error_size, "%s", why == NULL ? "dlopen failed" : why);
  }
  return NULL;
}

// The directory of the libllama the process has loaded, into directory; 0
// when there is none (libllama not loaded, or not a file the loader names).
static int llama_directory(char *directory, size_t size) {
  void *symbol = dlsym(RTLD_DEFAULT, "llama_model_load_from_file");
  Dl_info info;
  if (symbol == NULL || dladdr(symbol, &info) == 0 || info.dli_fname == NULL) return 0;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash == NULL) return 0;
  size_t length = (size_t)(slash - info.dli_fname);
  if (length == 0 || length >= size) return 0;
  memcpy(directory, info.dli_fname, length);
  directory[length] = '\0';
  return 1;
}

CHybridMTMD_library *CHybridMTMD_open(const char *directory, char *reason, size_t reason_size) {
  char error[512] = "";
  char opened[path_capacity] = "";
  void *handle = NULL;
  if (directory != NULL) {
    handle = open_in(directory, opened, error, sizeof error);
    if (handle == NULL) {
      set_reason(reason, reason_size, "libmtmd was not found in %s: %s", directory, error);
      return NULL;
    }
  } else {
    char beside[path_capacity];
    int has_llama = llama_directory(beside, sizeof beside);
    if (has_llama) handle = open_in(beside, opened, error, sizeof error);
    if (handle == NULL) handle = open_in(NULL, opened, error, sizeof error);
    if (handle == NULL) {
      set_reason(reason, reason_size, "libmtmd was not found beside libllama (%s) or on the library search path: %s",
                 has_llama ? beside : "libllama's directory unknown", error);
      return NULL;
    }
  }
  CHybridMTMD_library *library = calloc(1, sizeof *library);
  if (library == NULL) {
    dlclose(handle);
    set_reason(reason, reason_size, "no memory for the table of %s%s", opened, "");
    return NULL;
  }
  library->handle = handle;
  // Every function, or none: a libmtmd that lacks one is another version's.
#define CHYBRID_MTMD_RESOLVE(result, name, parameters)                                                     \
  *(void **)(&library->call.name) = dlsym(handle, #name);                                                 \
  if (library->call.name == NULL) {                                                                        \
    set_reason(reason, reason_size, "%s has no %s: it is not the libmtmd this library was built for", opened, \
               #name);                                                                                     \
    dlclose(handle);                                                                                       \
    free(library);                                                                                         \
    return NULL;                                                                                           \
  }
  CHYBRID_MTMD_FUNCTIONS(CHYBRID_MTMD_RESOLVE)
#undef CHYBRID_MTMD_RESOLVE
  // The file the loader found (a bare name from its search becomes a path).
  Dl_info info;
  void *symbol = *(void **)(&library->call.mtmd_default_marker);
  const char *file = dladdr(symbol, &info) != 0 && info.dli_fname != NULL ? info.dli_fname : opened;
  (void)snprintf(library->path, sizeof library->path, "%s", file);
  return library;
}

const char *CHybridMTMD_library_path(const CHybridMTMD_library *library) { return library->path; }

const char *CHybridMTMD_default_marker(const CHybridMTMD_library *library) {
  return library->call.mtmd_default_marker();
}

CHybridMTMD_context *CHybridMTMD_init(const CHybridMTMD_library *library, const char *path,
                                      const struct llama_model *model, CHybridMTMD_options options) {
  struct CHybridMTMD_mirror_context_params params = library->call.mtmd_context_params_default();
  params.use_gpu = options.use_gpu;
  params.print_timings = false;
  params.n_threads = options.threads;
  params.warmup = options.warmup;
  params.flash_attn_type = options.flash_attention;
  params.progress_callback = options.progress;
  params.progress_callback_user_data = options.progress_user_data;
  return library->call.mtmd_init_from_file(path, model, params);
}

void CHybridMTMD_free(const CHybridMTMD_library *library, CHybridMTMD_context *context) {
  if (context != NULL) library->call.mtmd_free(context);
}

bool CHybridMTMD_supports_vision(const CHybridMTMD_library *library, const CHybridMTMD_context *context) {
  return library->call.mtmd_support_vision(context);
}

bool CHybridMTMD_supports_audio(const CHybridMTMD_library *library, const CHybridMTMD_context *context) {
  return library->call.mtmd_support_audio(context);
}

const char *CHybridMTMD_marker(const CHybridMTMD_library *library, const CHybridMTMD_context *context) {
  return library->call.mtmd_get_marker(context);
}

bool CHybridMTMD_decode_non_causal(const CHybridMTMD_library *library, const CHybridMTMD_context *context) {
  // A NULL chunk asks about image chunks, the only media this module passes.
  return library->call.mtmd_decode_use_non_causal(context, NULL);
}

bool CHybridMTMD_decode_mrope(const CHybridMTMD_library *library, const CHybridMTMD_context *context) {
  return library->call.mtmd_decode_use_mrope(context);
}

CHybridMTMD_bitmap *CHybridMTMD_bitmap_rgb(const CHybridMTMD_library *library, uint32_t width, uint32_t height,
                                           const unsigned char *rgb, const char *id) {
  // libmtmd reads width * height * 3 bytes; a NULL rgb would make a
  // placeholder that only counts tokens, which this function does not offer.
  if (rgb == NULL || width == 0 || height == 0) return NULL;
  struct mtmd_bitmap *bitmap = library->call.mtmd_bitmap_init(width, height, rgb);
  if (bitmap != NULL && id != NULL) library->call.mtmd_bitmap_set_id(bitmap, id);
  return bitmap;
}

void CHybridMTMD_bitmap_free(const CHybridMTMD_library *library, CHybridMTMD_bitmap *bitmap) {
  if (bitmap != NULL) library->call.mtmd_bitmap_free(bitmap);
}

CHybridMTMD_bitmap *CHybridMTMD_bitmap_decode(const CHybridMTMD_library *library, const CHybridMTMD_context *context,
                                              const unsigned char *bytes, size_t length) {
  if (bytes == NULL || length == 0) return NULL;
  struct CHybridMTMD_mirror_init_opt options = library->call.mtmd_helper_init_opt_default();
  // "/dev/null/ffmpeg" cannot exist: the fallback to ffmpeg cannot start one.
  options.video_params.ffmpeg_bin_dir = "/dev/null";
  struct CHybridMTMD_mirror_bitmap_wrapper made =
      library->call.mtmd_helper_bitmap_init_from_buf(context, bytes, length, false, options);
  if (made.video_ctx != NULL) {
    if (made.bitmap != NULL) library->call.mtmd_bitmap_free(made.bitmap);
    library->call.mtmd_helper_video_free(made.video_ctx);
    return NULL;
  }
  if (made.bitmap != NULL && library->call.mtmd_bitmap_is_audio(made.bitmap)) {
    library->call.mtmd_bitmap_free(made.bitmap);
    return NULL;
  }
  return made.bitmap;
}

CHybridMTMD_chunks *CHybridMTMD_chunks_new(const CHybridMTMD_library *library) {
  return library->call.mtmd_input_chunks_init();
}

void CHybridMTMD_chunks_free(const CHybridMTMD_library *library, CHybridMTMD_chunks *chunks) {
  if (chunks != NULL) library->call.mtmd_input_chunks_free(chunks);
}

size_t CHybridMTMD_chunks_count(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks) {
  return library->call.mtmd_input_chunks_size(chunks);
}

size_t CHybridMTMD_chunks_tokens(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks) {
  return library->call.mtmd_helper_get_n_tokens(chunks);
}

int32_t CHybridMTMD_chunks_positions(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks) {
  return library->call.mtmd_helper_get_n_pos(chunks);
}

// The chunk at index, or NULL past the end.
static const struct mtmd_input_chunk *chunk_at(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks,
                                               size_t index) {
  if (index >= library->call.mtmd_input_chunks_size(chunks)) return NULL;
  return library->call.mtmd_input_chunks_get(chunks, index);
}

int32_t CHybridMTMD_chunk_kind(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks, size_t index) {
  const struct mtmd_input_chunk *chunk = chunk_at(library, chunks, index);
  return chunk == NULL ? -1 : (int32_t)library->call.mtmd_input_chunk_get_type(chunk);
}

const int32_t *CHybridMTMD_chunk_text(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks,
                                      size_t index, size_t *count) {
  *count = 0;
  const struct mtmd_input_chunk *chunk = chunk_at(library, chunks, index);
  // Only a text chunk has tokens to read.
  if (chunk == NULL || library->call.mtmd_input_chunk_get_type(chunk) != 0) return NULL;
  return library->call.mtmd_input_chunk_get_tokens_text(chunk, count);
}

const char *CHybridMTMD_chunk_id(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks, size_t index) {
  const struct mtmd_input_chunk *chunk = chunk_at(library, chunks, index);
  return chunk == NULL ? NULL : library->call.mtmd_input_chunk_get_id(chunk);
}

size_t CHybridMTMD_chunk_tokens(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks, size_t index) {
  const struct mtmd_input_chunk *chunk = chunk_at(library, chunks, index);
  return chunk == NULL ? 0 : library->call.mtmd_input_chunk_get_n_tokens(chunk);
}

int32_t CHybridMTMD_chunk_positions(const CHybridMTMD_library *library, const CHybridMTMD_chunks *chunks,
                                    size_t index) {
  const struct mtmd_input_chunk *chunk = chunk_at(library, chunks, index);
  return chunk == NULL ? 0 : library->call.mtmd_input_chunk_get_n_pos(chunk);
}

int32_t CHybridMTMD_tokenize(const CHybridMTMD_library *library, const CHybridMTMD_context *context,
                             CHybridMTMD_chunks *output, const char *text, size_t text_length, bool add_special,
                             bool parse_special, const CHybridMTMD_bitmap *const *bitmaps, size_t bitmap_count) {
  struct CHybridMTMD_mirror_input_text input = {text, text_length, add_special, parse_special};
  return library->call.mtmd_tokenize(context, output, &input, bitmaps, bitmap_count);
}

int32_t CHybridMTMD_evaluate_from(const CHybridMTMD_library *library, CHybridMTMD_context *context,
                                  struct llama_context *llama_context, const CHybridMTMD_chunks *chunks,
                                  size_t first_chunk, int32_t first_position, int32_t sequence, int32_t batch_size,
                                  bool logits_last, int32_t *next_position) {
  size_t count = library->call.mtmd_input_chunks_size(chunks);
  int32_t position = first_position;
  for (size_t index = first_chunk; index < count; index++) {
    const struct mtmd_input_chunk *chunk = library->call.mtmd_input_chunks_get(chunks, index);
    bool last = index + 1 == count;
    int32_t result = library->call.mtmd_helper_eval_chunk_single(context, llama_context, chunk, position, sequence,
                                                                  batch_size, last && logits_last, &position);
    if (result != 0) return result;
  }
  *next_position = position;
  return 0;
}

void CHybridMTMD_log_set(const CHybridMTMD_library *library, CHybridMTMD_log_callback callback, void *user_data) {
  library->call.mtmd_helper_log_set(callback, user_data);
}
