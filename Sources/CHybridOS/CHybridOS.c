// _GNU_SOURCE: glibc declares pthread_setname_np and dladdr only with it.
#define _GNU_SOURCE
#include "CHybridOS.h"

#include <dlfcn.h>
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
