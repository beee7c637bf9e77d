/*
 * prim.h - what the core needs from the operating system: the platform seam.
 *
 * One implementation is compiled into each copy (core/nsalloc.c picks
 * prim/unix.c or prim/windows.c), so everything here is `static` like the rest
 * of the core: two copies never share a lock, a once flag or a thread-exit key.
 *
 *   memory   prim_map_aligned: `size` bytes aligned to `alignment` (a power of
 *            two >= OS_PAGE), readable and writable, reading as zero, not
 *            resident until touched; prim_unmap returns a whole mapping;
 *            prim_purge gives a range's physical pages back while it stays
 *            accessible and reads as zero.
 *   clock    prim_now_ms: a monotonic clock in milliseconds.
 *   locks    prim_lock_t (PRIM_LOCK_INIT), prim_once_t (PRIM_ONCE_INIT).
 *   threads  a thread-exit key: prim_key_create(fn) makes fn(value) run when a
 *            thread that set a non-NULL value exits; after prim_key_delete no
 *            call of fn starts (the module may be unloaded next).
 *            prim_atfork registers fork handlers (no-op without fork).
 * The thread identity (thread_id) is in internal.h: it is on the fast path.
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
#define PRIM_LOCK_INIT SRWLOCK_INIT
#define PRIM_ONCE_INIT INIT_ONCE_STATIC_INIT
#else
#include <pthread.h>
typedef pthread_mutex_t prim_lock_t;
typedef pthread_once_t prim_once_t;
typedef pthread_key_t prim_key_t;
#define PRIM_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
#define PRIM_ONCE_INIT PTHREAD_ONCE_INIT
#endif

static void *prim_map_aligned(size_t size, size_t alignment);
static void prim_unmap(void *p, size_t size);
static void prim_purge(void *p, size_t size);
static uint64_t prim_now_ms(void);

static void prim_lock(prim_lock_t *lock);
static void prim_unlock(prim_lock_t *lock);
static void prim_once(prim_once_t *once, void (*fn)(void));

static bool prim_key_create(prim_key_t *key, void (*fn)(void *));
static void prim_key_set(prim_key_t key, void *value);
static void prim_key_delete(prim_key_t key);
static void prim_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

#endif /* NSALLOC_PRIM_H */
