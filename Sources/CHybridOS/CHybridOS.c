// _GNU_SOURCE: glibc declares pthread_setname_np and dladdr only with it.
#define _GNU_SOURCE
#include "CHybridOS.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// What a new thread needs, on the heap until it starts: the creator's stack
// may be gone by then.
struct start {
  CHybridOS_thread_body body;
  void *context;
  char name[16];
};

static void *run(void *argument) {
  struct start start = *(struct start *)argument;
  free(argument);
  if (start.name[0] != '\0') {
    // Named by the thread itself, before its body: Darwin names only the
    // calling thread. Best effort: a name refused changes nothing else.
#if defined(__APPLE__)
    (void)pthread_setname_np(start.name);
#else
    (void)pthread_setname_np(pthread_self(), start.name);
#endif
  }
  start.body(start.context);
  return NULL;
}

int CHybridOS_thread_start(size_t stack_size, const char *name, CHybridOS_thread_body body, void *context) {
  pthread_attr_t attributes;
  int failure = pthread_attr_init(&attributes);
  if (failure != 0) return failure;
#ifdef PTHREAD_STACK_MIN
  if (stack_size < (size_t)PTHREAD_STACK_MIN) stack_size = (size_t)PTHREAD_STACK_MIN;
#endif
  failure = pthread_attr_setstacksize(&attributes, stack_size);
  if (failure == 0) failure = pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  struct start *start = failure == 0 ? calloc(1, sizeof *start) : NULL;
  if (failure == 0 && start == NULL) failure = ENOMEM;
  if (failure == 0) {
    start->body = body;
    start->context = context;
    // 15 bytes and the terminator: Linux refuses a longer name (ERANGE).
    if (name != NULL) strncpy(start->name, name, sizeof start->name - 1);
    pthread_t thread;
    failure = pthread_create(&thread, &attributes, run, start);
    if (failure != 0) free(start);
  }
  pthread_attr_destroy(&attributes);
  return failure;
}

const char *CHybridOS_loaded_file(const void *address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == NULL || info.dli_fname[0] == '\0') return NULL;
  return info.dli_fname;
}

// OpenSSL's EVP digest functions, by their documented signatures with the
// structures left opaque (void *): no OpenSSL header is needed to call them.
static struct {
  void *(*ctx_new)(void);
  void (*ctx_free)(void *context);
  int (*ctx_copy)(void *destination, const void *source);
  const void *(*sha256)(void);
  int (*init)(void *context, const void *type, void *engine);
  int (*update)(void *context, const void *bytes, size_t count);
  int (*final)(void *context, unsigned char *digest, unsigned int *size);
} evp;
static pthread_once_t evp_once = PTHREAD_ONCE_INIT;
static int evp_found;

// Looks every function up in the libraries already loaded (RTLD_DEFAULT),
// once: dlsym takes the loader's lock, too slow for every update.
static void evp_resolve(void) {
  evp.ctx_new = (void *(*)(void))dlsym(RTLD_DEFAULT, "EVP_MD_CTX_new");
  evp.ctx_free = (void (*)(void *))dlsym(RTLD_DEFAULT, "EVP_MD_CTX_free");
  evp.ctx_copy = (int (*)(void *, const void *))dlsym(RTLD_DEFAULT, "EVP_MD_CTX_copy_ex");
  evp.sha256 = (const void *(*)(void))dlsym(RTLD_DEFAULT, "EVP_sha256");
  evp.init = (int (*)(void *, const void *, void *))dlsym(RTLD_DEFAULT, "EVP_DigestInit_ex");
  evp.update = (int (*)(void *, const void *, size_t))dlsym(RTLD_DEFAULT, "EVP_DigestUpdate");
  evp.final = (int (*)(void *, unsigned char *, unsigned int *))dlsym(RTLD_DEFAULT, "EVP_DigestFinal_ex");
  evp_found = evp.ctx_new != NULL && evp.ctx_free != NULL && evp.ctx_copy != NULL && evp.sha256 != NULL &&
              evp.init != NULL && evp.update != NULL && evp.final != NULL;
}

int CHybridOS_sha256_available(void) {
  // A failed pthread_once leaves evp_found 0: the caller hashes in Swift.
  (void)pthread_once(&evp_once, evp_resolve);
  return evp_found;
}

CHybridOS_sha256 *CHybridOS_sha256_new(void) {
  if (!CHybridOS_sha256_available()) return NULL;
  const void *type = evp.sha256();
  if (type == NULL) return NULL;
  void *context = evp.ctx_new();
  if (context == NULL) return NULL;
  if (evp.init(context, type, NULL) != 1) {
    evp.ctx_free(context);
    return NULL;
  }
  return context;
}

CHybridOS_sha256 *CHybridOS_sha256_copy(const CHybridOS_sha256 *source) {
  if (source == NULL || !CHybridOS_sha256_available()) return NULL;
  void *context = evp.ctx_new();
  if (context == NULL) return NULL;
  if (evp.ctx_copy(context, source) != 1) {
    evp.ctx_free(context);
    return NULL;
  }
  return context;
}

int CHybridOS_sha256_update(CHybridOS_sha256 *context, const void *bytes, size_t count) {
  if (context == NULL || !CHybridOS_sha256_available()) return 0;
  if (count == 0) return 1;
  return evp.update(context, bytes, count) == 1;
}

int CHybridOS_sha256_final(CHybridOS_sha256 *context, uint8_t digest[32]) {
  if (context == NULL || !CHybridOS_sha256_available()) return 0;
  // EVP_MAX_MD_SIZE (64): room for any digest, though SHA-256 writes 32.
  unsigned char full[64];
  unsigned int size = 0;
  if (evp.final(context, full, &size) != 1 || size != 32) return 0;
  memcpy(digest, full, 32);
  return 1;
}

void CHybridOS_sha256_free(CHybridOS_sha256 *context) {
  if (context != NULL && CHybridOS_sha256_available()) evp.ctx_free(context);
}

int CHybridOS_start_writeback(int fd, int64_t offset, int64_t count) {
#ifdef __linux__
    return sync_file_range(fd, (off_t)offset, (off_t)count, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    (void)fd;
    (void)offset;
    (void)count;
    return 0;
#endif
}
