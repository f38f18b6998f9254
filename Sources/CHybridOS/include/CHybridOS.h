// The OS calls the library's Swift code reaches through C: what the C
// library's Swift module leaves out (Glibc's module map has no sys/epoll.h;
// pthread_setname_np and dladdr are declared only under _GNU_SOURCE), what
// Swift imports with a different signature on each C library (a thread's
// start), and what the process may hold without the library linking it
// (OpenSSL's SHA-256, looked up by name). Each has one signature everywhere; what only Linux has
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

// SHA-256 through OpenSSL's EVP digest API, when libcrypto is already in the
// process: on Linux, FoundationNetworking loads libcurl, which loads it. Its
// functions are looked up by name in the loaded libraries (dlsym), never
// linked, so the library gains no system dependency; where they are absent
// (libcurl on GnuTLS, musl, Darwin) CHybridOS_sha256_available is 0 and the
// caller hashes in Swift. OpenSSL uses the CPU's SHA instructions where it
// has them, several times faster than portable code.

// An EVP_MD_CTX, opaque: only OpenSSL's functions touch it.
typedef struct CHybridOS_sha256 CHybridOS_sha256;

// 1 when every EVP function the ones below call was found (looked up once per
// process), 0 otherwise.
int CHybridOS_sha256_available(void);

// A new context that has hashed nothing; NULL when OpenSSL is not in the
// process or fails to allocate or start one. Free it with
// CHybridOS_sha256_free.
CHybridOS_sha256 *CHybridOS_sha256_new(void);

// A new context in the state of source, which is only read (so contexts
// copied from one source on several threads at once is safe); NULL on
// failure. Free it with CHybridOS_sha256_free.
CHybridOS_sha256 *CHybridOS_sha256_copy(const CHybridOS_sha256 *source);

// Hashes count bytes at bytes after those given before. Returns 1, or 0 when
// OpenSSL refuses (the context's digest is then unknown).
int CHybridOS_sha256_update(CHybridOS_sha256 *context, const void *bytes, size_t count);

// Writes the 32-byte digest of everything given to context to digest and
// returns 1, or returns 0. Either way the context takes no more bytes:
// finish a copy to go on hashing.
int CHybridOS_sha256_final(CHybridOS_sha256 *context, uint8_t digest[32]);

// Frees a context from CHybridOS_sha256_new or _copy; NULL is ignored.
void CHybridOS_sha256_free(CHybridOS_sha256 *context);

// Asks the kernel to start writing count bytes of fd from offset to the disk
// now, without waiting (Linux's sync_file_range with SYNC_FILE_RANGE_WRITE,
// which glibc declares only under _GNU_SOURCE). A download calls it as it
// writes, so that the fsync before its rename finds little left to write.
// Returns 0, or the error number; elsewhere it does nothing and returns 0.
int CHybridOS_start_writeback(int fd, int64_t offset, int64_t count);

#endif
