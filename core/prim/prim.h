/*
 * prim.h - the platform seam: everything the core asks of the operating
 * system, as one small interface. The core calls nothing else of the OS.
 *
 * One file per platform family implements it (core/nsalloc.c includes the
 * right one right after internal.h, so the whole core stays one translation
 * unit and every function here stays `static`):
 *   prim/unix.c     Linux (glibc, musl), macOS, FreeBSD
 *   prim/windows.c  Windows x86-64 (mingw-w64; tested under wine)
 *
 * Memory contract
 *   - prim_map_aligned(size, alignment): `size` zero-filled read/write bytes
 *     starting at a multiple of `alignment`. Both are multiples of
 *     prim_page_size(); `alignment` is a power of two. The memory need not be
 *     resident (or committed) until touched. NULL on failure.
 *   - prim_unmap(p, size): the exact range one prim_map_aligned() returned.
 *   - prim_purge(p, size): give the physical memory of whole OS pages back;
 *     the range stays mapped and accessible. `p` and `size` are multiples of
 *     prim_page_size(). Returns false when nothing was purged.
 *     PRIM_PURGE_ZEROES is 1 when purged memory reads back as zero (so the
 *     core may skip zeroing it), 0 when its contents are undefined.
 *   - prim_hint_huge_pages(p, size): a hint that the range will be used
 *     whole, so the OS may back it with large pages on first touch (Linux
 *     transparent huge pages; a no-op elsewhere). Returns whether large
 *     pages may back the range: false where the hint was refused, is not
 *     supported, or large pages are switched off (Linux: THP mode "never",
 *     or PR_SET_THP_DISABLE). The range keeps its contract: prim_purge of
 *     part of it still gives those pages back (Linux splits the large page).
 *   - prim_move(dst, src, size): move the pages of [src, src + size) to
 *     [dst, dst + size), resident ones staying resident with their contents,
 *     without copying them; both ranges are multiples of prim_page_size(),
 *     disjoint, and each lies inside ONE mapping (the caller's guarantee: on
 *     Linux before 6.17 a range across two mappings fails). `dst` is a range
 *     the core mapped and keeps: afterwards it holds the moved pages and `src`
 *     is unmapped: PRIM_MOVE_DONE. PRIM_MOVE_FAILED: nothing moved; `dst` is
 *     mapped, zero-filled or as it was, and `src` as it was. PRIM_MOVE_LOST:
 *     nothing moved, `src` as it was, and `dst` may no longer be the core's
 *     (the OS released it and another mapping may have taken its place): the
 *     core must never touch it again. PRIM_MOVES_PAGES is 1 where it can
 *     succeed (Linux: mremap), 0 where it always fails.
 *   - prim_page_size(): the OS page size, read at run time (4 KiB on x86-64;
 *     4, 16 or 64 KiB on aarch64 kernels; 16 KiB on Apple silicon).
 *
 * Threads
 *   - prim_thread_id(): an id unique among LIVE threads, cheap (the fast
 *     paths compare it). It may be reused after a thread exits. Never 0.
 *   - prim_in_initial_thread(): whether the calling thread is the process's
 *     initial thread (the one main() started on); true where that cannot be
 *     told. A system call on Linux: slow paths only.
 *   - prim_lock_t, PRIM_LOCK_INIT: a static-initialisable mutex.
 *   - prim_once_t, PRIM_ONCE_INIT, prim_once(): run a function once.
 *   - prim_key_t: a thread-exit hook: prim_key_set(key, v) with v != NULL
 *     makes the thread call the key's destructor with v when it exits.
 *     prim_key_delete() stops any later call (needed before unloading).
 *   - prim_atfork(): handlers around fork() (no-op where fork does not exist).
 *   - prim_yield(): give the CPU to another thread (a short spin wait).
 *   - prim_at_exit(): a handler run at process exit, or when the module
 *     holding the copy is unloaded, whichever comes first.
 *   - prim_thread_start(thread, name, main, arg): run main(arg) on a new
 *     thread with every signal blocked (a host's signals never land on it),
 *     named `name` where threads have names that tools show (Linux: top, gdb,
 *     /proc/PID/task/TID/comm, the first 15 bytes); false when no thread was
 *     started. The thread names itself as it starts. `thread` and `name` must
 *     outlive the thread.
 *     prim_thread_join() waits for it to return.
 *   - prim_cond_t, PRIM_COND_INIT: a static-initialisable condition
 *     variable. prim_cond_wait_ms(cond, lock, ms) waits, `lock` held, until
 *     woken or about `ms` ms passed (PRIM_WAIT_FOREVER: no limit), spurious
 *     wake-ups included; prim_cond_wake() wakes one waiter.
 *
 * Looking at other modules (slow paths only)
 *   - prim_read_safely(address, out, size): copy `size` bytes at `address`
 *     into `out` when all of them are readable, else return false - never
 *     fault, whatever `address` is (unmapped, a guard page, being unmapped
 *     by another thread). errno is left as it was.
 *   - prim_module_name(address, out, size): the file of the loaded module
 *     (shared object, DLL or executable) that contains `address`, as a
 *     NUL-terminated string; false when none does (its module was unloaded).
 *
 * Misc
 *   - prim_clock_ms(): a monotonic clock in milliseconds.
 *   - prim_write_error(text, length): best-effort write to the error stream.
 *   - PRIM_TLS_ATTR, PRIM_TLS_NAME: the TLS model of the copy's own
 *     thread-local variables and its name in the identification record.
 *   - PRIM_MODULE_CONSTRUCTOR: marks a function run when the module holding
 *     the copy is loaded.
 *   - PRIM_MODULE_DESTRUCTOR: marks a function run when the module holding
 *     the copy is unloaded (and at exit).
 */
#ifndef NSALLOC_PRIM_H
#define NSALLOC_PRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
typedef SRWLOCK prim_lock_t;
typedef INIT_ONCE prim_once_t;
typedef DWORD prim_key_t; /* an FLS index */
typedef CONDITION_VARIABLE prim_cond_t;
typedef struct prim_thread_s {
  HANDLE handle;
} prim_thread_t;
#define PRIM_LOCK_INIT          SRWLOCK_INIT
#define PRIM_COND_INIT          CONDITION_VARIABLE_INIT
#define PRIM_ONCE_INIT          INIT_ONCE_STATIC_INIT
#define PRIM_MODULE_CONSTRUCTOR __attribute__((constructor)) /* run at DLL_PROCESS_ATTACH */
#define PRIM_MODULE_DESTRUCTOR  __attribute__((destructor))  /* run at DLL_PROCESS_DETACH */
#else
#include <pthread.h>
typedef pthread_mutex_t prim_lock_t;
typedef pthread_once_t prim_once_t;
typedef pthread_key_t prim_key_t;
typedef pthread_cond_t prim_cond_t;
typedef struct prim_thread_s {
  pthread_t handle;
  const char *name;
  void (*main)(void *);
  void *arg;
} prim_thread_t;
#define PRIM_LOCK_INIT          PTHREAD_MUTEX_INITIALIZER
#define PRIM_COND_INIT          PTHREAD_COND_INITIALIZER
#define PRIM_ONCE_INIT          PTHREAD_ONCE_INIT
#define PRIM_MODULE_CONSTRUCTOR __attribute__((constructor))
#define PRIM_MODULE_DESTRUCTOR  __attribute__((destructor))
#endif

/* The TLS model of the copy's thread-local variables, set on the variables
 * themselves so the identification record (init.c) names it by construction,
 * whatever -ftls-model the build passes: global-dynamic (dlopen-safe; TLS
 * descriptors or the classic __tls_get_addr sequence, whichever dialect the
 * compiler uses), or initial-exec when the build opts in to static TLS with
 * NSALLOC_TLS_INITIAL_EXEC=1 (executables and modules loaded at startup). */
#if defined(__ELF__) && defined(NSALLOC_TLS_INITIAL_EXEC) && NSALLOC_TLS_INITIAL_EXEC
#define PRIM_TLS_ATTR __attribute__((tls_model("initial-exec")))
#define PRIM_TLS_NAME "initial-exec"
#elif defined(__ELF__)
#define PRIM_TLS_ATTR __attribute__((tls_model("global-dynamic")))
#define PRIM_TLS_NAME "global-dynamic"
#elif defined(_WIN32) && defined(__GNUC__) && !defined(__clang__)
/* GCC for mingw-w64 emulates TLS (__emutls_get_address, per module). */
#define PRIM_TLS_ATTR
#define PRIM_TLS_NAME "emutls"
#else /* Mach-O and PE have one TLS mechanism each */
#define PRIM_TLS_ATTR
#define PRIM_TLS_NAME "native"
#endif

/* memory */
static void *prim_map_aligned(size_t size, size_t alignment);
static void prim_unmap(void *p, size_t size);
static bool prim_purge(void *p, size_t size);
static bool prim_hint_huge_pages(void *p, size_t size);
enum prim_move_result { PRIM_MOVE_FAILED, PRIM_MOVE_DONE, PRIM_MOVE_LOST };
static enum prim_move_result prim_move(void *dst, void *src, size_t size);
static size_t prim_page_size(void);
/* threads */
static inline uintptr_t prim_thread_id(void);
static bool prim_in_initial_thread(void);
static inline void prim_lock(prim_lock_t *lock);
static inline void prim_unlock(prim_lock_t *lock);
static void prim_once(prim_once_t *once, void (*init)(void));
static bool prim_key_create(prim_key_t *key, void (*destructor)(void *));
static void prim_key_delete(prim_key_t key);
static void prim_key_set(prim_key_t key, void *value);
static void prim_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
static void prim_yield(void);
static void prim_at_exit(void (*handler)(void));
static bool prim_thread_start(prim_thread_t *thread, const char *name, void (*main)(void *),
                              void *arg);
static void prim_thread_join(prim_thread_t *thread);
#define PRIM_WAIT_FOREVER UINT64_MAX
static void prim_cond_wait_ms(prim_cond_t *cond, prim_lock_t *lock, uint64_t ms);
static void prim_cond_wake(prim_cond_t *cond);
/* looking at other modules */
static bool prim_read_safely(const void *address, void *out, size_t size);
static bool prim_module_name(const void *address, char *out, size_t size);
/* misc */
static uint64_t prim_clock_ms(void);
static void prim_write_error(const char *text, size_t length);

#endif /* NSALLOC_PRIM_H */
