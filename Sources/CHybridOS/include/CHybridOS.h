// The OS calls the library's Swift code reaches through C: what the C
// library's Swift module leaves out (Glibc's module map has no sys/epoll.h;
// pthread_setname_np and dladdr are declared only under _GNU_SOURCE), and
// what Swift imports with a different signature on each C library (a
// thread's start). Each has one signature everywhere; what only Linux has
// is behind __linux__, so the module builds, smaller, on any other OS.
#ifndef C_HYBRID_OS_H
#define C_HYBRID_OS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __linux__
#include <sys/epoll.h>

// epoll's constants with one type on glibc (an enum) and musl (macros).
static const uint32_t CHybridOS_EPOLLIN = EPOLLIN;
static const int CHybridOS_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CHybridOS_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
static const int CHybridOS_EPOLL_CLOEXEC = EPOLL_CLOEXEC;

// struct epoll_event as C lays it out (packed on x86-64), for tests that
// check Swift's import of it agrees.
static const size_t CHybridOS_epoll_event_size = sizeof(struct epoll_event);
static const size_t CHybridOS_epoll_event_data_offset = offsetof(struct epoll_event, data);
#endif

// The body of a thread CHybridOS_thread_start starts, given its context.
typedef void (*CHybridOS_thread_body)(void *context);

// Starts a detached thread with a stack of stack_size bytes (raised to
// PTHREAD_STACK_MIN) that names itself name (NULL: no name; cut to the 15
// bytes Linux keeps) and runs body(context). Returns 0, or the error number
// when the thread was not made: body is then never called.
int CHybridOS_thread_start(size_t stack_size, const char *name, CHybridOS_thread_body body, void *context);

// The path of the loaded file (a shared library, or the executable) whose
// mapping holds address, as the dynamic loader names it; NULL when none does.
const char *CHybridOS_loaded_file(const void *address);

#endif
