// Compiled (never run) by scripts/check-mtmd-declarations.sh: the libmtmd
// declarations of Sources/CHybridMTMD/mtmd-declarations.h against the installed
// mtmd.h and mtmd-helper.h. A compile error names what differs.
#include <stddef.h>

#include "mtmd.h"
#include "mtmd-helper.h"

// The prototypes with libmtmd's own structure and callback types in them, so
// that each is compared whole (a mirror's fields are compared below).
#define CHYBRID_MTMD_CONTEXT_PARAMS struct mtmd_context_params
#define CHYBRID_MTMD_INPUT_TEXT struct mtmd_input_text
#define CHYBRID_MTMD_LOG_CALLBACK ggml_log_callback
#define CHYBRID_MTMD_CHUNK_TYPE enum mtmd_input_chunk_type
#define CHYBRID_MTMD_INIT_OPT struct mtmd_helper_init_opt
#define CHYBRID_MTMD_BITMAP_WRAPPER struct mtmd_helper_bitmap_wrapper
#include "mtmd-declarations.h"

// Each function as declared here has the type libmtmd's header gives it.
#define CHECK_FUNCTION(result, name, parameters)                                             \
  typedef result(*declared_##name) parameters;                                               \
  _Static_assert(__builtin_types_compatible_p(declared_##name, __typeof__(&name)),           \
                 #name ": the declaration in mtmd-declarations.h is not mtmd.h's prototype");
CHYBRID_MTMD_FUNCTIONS(CHECK_FUNCTION)

// A mirror's field has the real one's offset, size and (where the mirror
// names the same type) type; the mirror has the real structure's size.
#define CHECK_FIELD(real, mirror, field)                                                                     \
  _Static_assert(offsetof(real, field) == offsetof(mirror, field), #real "." #field ": another offset");      \
  _Static_assert(sizeof(((real *)0)->field) == sizeof(((mirror *)0)->field), #real "." #field ": another size");
#define CHECK_TYPE(real, mirror, field)                                                                       \
  _Static_assert(__builtin_types_compatible_p(__typeof__(((real *)0)->field), __typeof__(((mirror *)0)->field)), \
                 #real "." #field ": another type");

#define PARAMS struct mtmd_context_params
#define MIRROR struct CHybridMTMD_mirror_context_params
_Static_assert(sizeof(PARAMS) == sizeof(MIRROR), "struct mtmd_context_params: another size");
_Static_assert(_Alignof(PARAMS) == _Alignof(MIRROR), "struct mtmd_context_params: another alignment");
CHECK_FIELD(PARAMS, MIRROR, use_gpu)
CHECK_TYPE(PARAMS, MIRROR, use_gpu)
CHECK_FIELD(PARAMS, MIRROR, device)
CHECK_TYPE(PARAMS, MIRROR, device)
CHECK_FIELD(PARAMS, MIRROR, print_timings)
CHECK_TYPE(PARAMS, MIRROR, print_timings)
CHECK_FIELD(PARAMS, MIRROR, n_threads)
CHECK_TYPE(PARAMS, MIRROR, n_threads)
CHECK_FIELD(PARAMS, MIRROR, image_marker)
CHECK_TYPE(PARAMS, MIRROR, image_marker)
CHECK_FIELD(PARAMS, MIRROR, media_marker)
CHECK_TYPE(PARAMS, MIRROR, media_marker)
CHECK_FIELD(PARAMS, MIRROR, flash_attn_type)
_Static_assert(LLAMA_FLASH_ATTN_TYPE_AUTO == -1 && LLAMA_FLASH_ATTN_TYPE_DISABLED == 0 &&
                   LLAMA_FLASH_ATTN_TYPE_ENABLED == 1,
               "enum llama_flash_attn_type: other values than CHybridMTMD_options.flash_attention documents");
CHECK_FIELD(PARAMS, MIRROR, warmup)
CHECK_TYPE(PARAMS, MIRROR, warmup)
CHECK_FIELD(PARAMS, MIRROR, image_min_tokens)
CHECK_TYPE(PARAMS, MIRROR, image_min_tokens)
CHECK_FIELD(PARAMS, MIRROR, image_max_tokens)
CHECK_TYPE(PARAMS, MIRROR, image_max_tokens)
CHECK_FIELD(PARAMS, MIRROR, cb_eval)
CHECK_TYPE(PARAMS, MIRROR, cb_eval)
CHECK_FIELD(PARAMS, MIRROR, cb_eval_user_data)
CHECK_TYPE(PARAMS, MIRROR, cb_eval_user_data)
CHECK_FIELD(PARAMS, MIRROR, batch_max_tokens)
CHECK_TYPE(PARAMS, MIRROR, batch_max_tokens)
CHECK_FIELD(PARAMS, MIRROR, progress_callback)
CHECK_TYPE(PARAMS, MIRROR, progress_callback)
CHECK_FIELD(PARAMS, MIRROR, progress_callback_user_data)
CHECK_TYPE(PARAMS, MIRROR, progress_callback_user_data)
#undef PARAMS
#undef MIRROR

#define TEXT struct mtmd_input_text
#define MIRROR struct CHybridMTMD_mirror_input_text
_Static_assert(sizeof(TEXT) == sizeof(MIRROR), "struct mtmd_input_text: another size");
CHECK_FIELD(TEXT, MIRROR, text)
CHECK_TYPE(TEXT, MIRROR, text)
CHECK_FIELD(TEXT, MIRROR, text_len)
CHECK_TYPE(TEXT, MIRROR, text_len)
CHECK_FIELD(TEXT, MIRROR, add_special)
CHECK_TYPE(TEXT, MIRROR, add_special)
CHECK_FIELD(TEXT, MIRROR, parse_special)
CHECK_TYPE(TEXT, MIRROR, parse_special)
#undef TEXT
#undef MIRROR

#define VIDEO struct mtmd_helper_video_init_params
#define MIRROR struct CHybridMTMD_mirror_video_init_params
_Static_assert(sizeof(VIDEO) == sizeof(MIRROR), "struct mtmd_helper_video_init_params: another size");
CHECK_FIELD(VIDEO, MIRROR, fps_target)
CHECK_TYPE(VIDEO, MIRROR, fps_target)
CHECK_FIELD(VIDEO, MIRROR, ffmpeg_bin_dir)
CHECK_TYPE(VIDEO, MIRROR, ffmpeg_bin_dir)
CHECK_FIELD(VIDEO, MIRROR, timestamp_interval_ms)
CHECK_TYPE(VIDEO, MIRROR, timestamp_interval_ms)
#undef VIDEO
#undef MIRROR

#define OPT struct mtmd_helper_init_opt
#define MIRROR struct CHybridMTMD_mirror_init_opt
_Static_assert(sizeof(OPT) == sizeof(MIRROR), "struct mtmd_helper_init_opt: another size");
CHECK_FIELD(OPT, MIRROR, video_params)
#undef OPT
#undef MIRROR

#define WRAPPER struct mtmd_helper_bitmap_wrapper
#define MIRROR struct CHybridMTMD_mirror_bitmap_wrapper
_Static_assert(sizeof(WRAPPER) == sizeof(MIRROR), "struct mtmd_helper_bitmap_wrapper: another size");
CHECK_FIELD(WRAPPER, MIRROR, bitmap)
CHECK_TYPE(WRAPPER, MIRROR, bitmap)
CHECK_FIELD(WRAPPER, MIRROR, video_ctx)
CHECK_TYPE(WRAPPER, MIRROR, video_ctx)
#undef WRAPPER
#undef MIRROR

// The log callback's level: an enum passed as the mirror's int.
_Static_assert(sizeof(enum ggml_log_level) == sizeof(int), "enum ggml_log_level is not int-sized");
_Static_assert(GGML_LOG_LEVEL_DEBUG == 1 && GGML_LOG_LEVEL_INFO == 2 && GGML_LOG_LEVEL_WARN == 3 &&
                   GGML_LOG_LEVEL_ERROR == 4 && GGML_LOG_LEVEL_CONT == 5,
               "enum ggml_log_level: other values than CHybridMTMD_log_callback documents");
// llama_pos and llama_seq_id, written int32_t in the prototypes.
_Static_assert(__builtin_types_compatible_p(llama_pos, int32_t), "llama_pos is not int32_t");
_Static_assert(__builtin_types_compatible_p(llama_seq_id, int32_t), "llama_seq_id is not int32_t");
