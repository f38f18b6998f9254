// Loads a GGUF the way HybridInference does (model, context, one decode) with no
// up-front check, to see whether llama.cpp fails cleanly or takes the process down.
// Built and run by scripts/probe-crafted-models.sh.
#include <stdio.h>
#include <string.h>
#include "llama.h"
static void quiet(enum ggml_log_level l, const char *t, void *u) { (void)u; if (l >= GGML_LOG_LEVEL_WARN) fputs(t, stderr); }
int main(int argc, char **argv) {
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    struct llama_model *m = llama_model_load_from_file(argv[1], mp);
    if (!m) { printf("RESULT load-failed-cleanly\n"); return 3; }
    struct llama_context_params cp = llama_context_default_params();
    int trained = llama_model_n_ctx_train(m);
    cp.n_ctx = trained < 512 ? trained : 512; cp.n_batch = 512; cp.n_ubatch = 512; cp.n_seq_max = 1; cp.n_threads = 1; cp.n_threads_batch = 1;
    struct llama_context *c = llama_init_from_model(m, cp);
    if (!c) { printf("RESULT context-failed-cleanly\n"); return 4; }
    const struct llama_vocab *v = llama_model_get_vocab(m);
    llama_token toks[64];
    int n = llama_tokenize(v, "Hello world", 11, toks, 64, true, true);
    if (n <= 0) { printf("RESULT tokenize-failed %d\n", n); return 5; }
    int rc = llama_decode(c, llama_batch_get_one(toks, n));
    printf("RESULT decoded rc=%d\n", rc);
    llama_free(c); llama_model_free(m);
    return rc == 0 ? 0 : 6;
}
