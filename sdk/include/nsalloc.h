/*
 * nsalloc.h - public API of one nsalloc copy.
 *
 * Every symbol a build defines is NSALLOC_PREFIX + name. Code always writes the
 * canonical names (nsalloc_malloc, nsalloc_free, ...); when the including
 * translation unit is compiled with -DNSALLOC_PREFIX=foo_ the macros below map
 * them onto foo_malloc, foo_free, ... so one source file can be linked against
 * any private copy. A copy exports nothing unless built with NSALLOC_EXPORTS
 * (see NSALLOC_API below).
 */
#ifndef NSALLOC_H
#define NSALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSALLOC_VERSION_MAJOR  0
#define NSALLOC_VERSION_MINOR  1
#define NSALLOC_VERSION_PATCH  0
#define NSALLOC_VERSION_STRING "0.1.0"

#ifndef NSALLOC_PREFIX
#define NSALLOC_PREFIX nsalloc_
#endif

#define NSALLOC_CAT_(a, b)    a##b
#define NSALLOC_CAT(a, b)     NSALLOC_CAT_(a, b)
#define NSALLOC_NAME(name)    NSALLOC_CAT(NSALLOC_PREFIX, name)
#define NSALLOC_STRINGIFY_(x) #x
#define NSALLOC_STRINGIFY(x)  NSALLOC_STRINGIFY_(x)
#define NSALLOC_PREFIX_STRING NSALLOC_STRINGIFY(NSALLOC_PREFIX)

/* Visibility. A copy is private unless its build asks for exports: the core
 * (NSALLOC_BUILDING_CORE, set by internal.h) defines the API hidden, and only
 * with NSALLOC_EXPORTS (the shared and override libraries) default. Code that
 * merely calls the API declares it with no attribute (it may link against the
 * shared library), or hidden under NSALLOC_PRIVATE (the copy is in the same
 * module). */
#if defined(_WIN32)
/* PE has no symbol interposition (an import names its DLL): a private copy
 * needs no attribute, and a DLL build exports the API explicitly. */
#if defined(NSALLOC_BUILDING_CORE) && defined(NSALLOC_EXPORTS) && !defined(NSALLOC_PRIVATE)
#define NSALLOC_API __declspec(dllexport)
#else
#define NSALLOC_API
#endif
#elif defined(NSALLOC_PRIVATE) || (defined(NSALLOC_BUILDING_CORE) && !defined(NSALLOC_EXPORTS))
#define NSALLOC_API __attribute__((visibility("hidden")))
#elif defined(NSALLOC_BUILDING_CORE)
#define NSALLOC_API __attribute__((visibility("default")))
#else
#define NSALLOC_API
#endif

#define NSALLOC_MALLOC_ATTRS __attribute__((malloc, warn_unused_result))
#define NSALLOC_PRINTF_ATTRS __attribute__((format(printf, 1, 2)))

#ifdef __cplusplus
extern "C" {
#endif

/* ---- name mapping: canonical name -> prefixed name ---------------------- */
#define nsalloc_malloc              NSALLOC_NAME(malloc)
#define nsalloc_calloc              NSALLOC_NAME(calloc)
#define nsalloc_realloc             NSALLOC_NAME(realloc)
#define nsalloc_reallocarray        NSALLOC_NAME(reallocarray)
#define nsalloc_free                NSALLOC_NAME(free)
#define nsalloc_free_sized          NSALLOC_NAME(free_sized)
#define nsalloc_forwarding_free     NSALLOC_NAME(forwarding_free)
#define nsalloc_forwarding_realloc  NSALLOC_NAME(forwarding_realloc)
#define nsalloc_usable_size         NSALLOC_NAME(usable_size)
#define nsalloc_good_size           NSALLOC_NAME(good_size)
#define nsalloc_aligned_alloc       NSALLOC_NAME(aligned_alloc)
#define nsalloc_posix_memalign      NSALLOC_NAME(posix_memalign)
#define nsalloc_memalign            NSALLOC_NAME(memalign)
#define nsalloc_strdup              NSALLOC_NAME(strdup)
#define nsalloc_strndup             NSALLOC_NAME(strndup)
#define nsalloc_owns                NSALLOC_NAME(owns)
#define nsalloc_heap_new            NSALLOC_NAME(heap_new)
#define nsalloc_heap_delete         NSALLOC_NAME(heap_delete)
#define nsalloc_heap_destroy        NSALLOC_NAME(heap_destroy)
#define nsalloc_heap_malloc         NSALLOC_NAME(heap_malloc)
#define nsalloc_heap_calloc         NSALLOC_NAME(heap_calloc)
#define nsalloc_heap_realloc        NSALLOC_NAME(heap_realloc)
#define nsalloc_heap_reallocarray   NSALLOC_NAME(heap_reallocarray)
#define nsalloc_heap_aligned_alloc  NSALLOC_NAME(heap_aligned_alloc)
#define nsalloc_heap_strdup         NSALLOC_NAME(heap_strdup)
#define nsalloc_heap_strndup        NSALLOC_NAME(heap_strndup)
#define nsalloc_heap_free           NSALLOC_NAME(heap_free)
#define nsalloc_heap_owns           NSALLOC_NAME(heap_owns)
#define nsalloc_heap_collect        NSALLOC_NAME(heap_collect)
#define nsalloc_heap_stats          NSALLOC_NAME(heap_stats)
#define nsalloc_collect             NSALLOC_NAME(collect)
#define nsalloc_stats               NSALLOC_NAME(stats)
#define nsalloc_option_get          NSALLOC_NAME(option_get)
#define nsalloc_option_set          NSALLOC_NAME(option_set)
#define nsalloc_set_foreign_policy  NSALLOC_NAME(set_foreign_policy)
#define nsalloc_set_message_handler NSALLOC_NAME(set_message_handler)
#define nsalloc_message             NSALLOC_NAME(message)
#define nsalloc_set_os_source       NSALLOC_NAME(set_os_source)
#define nsalloc_version             NSALLOC_NAME(version)
#define nsalloc_prefix              NSALLOC_NAME(prefix)
#define nsalloc_shutdown            NSALLOC_NAME(shutdown)
#define nsalloc_unload              NSALLOC_NAME(unload)

/* ---- standard allocation ------------------------------------------------ */
/* Every pointer returned is aligned to at least 16 bytes. malloc(0) returns a
 * unique pointer. Size overflow gives NULL with errno = ENOMEM; a bad alignment
 * gives NULL (or the error code) with EINVAL. */
NSALLOC_API NSALLOC_MALLOC_ATTRS void *nsalloc_malloc(size_t size);
NSALLOC_API NSALLOC_MALLOC_ATTRS void *nsalloc_calloc(size_t count, size_t size);
/* realloc(p, 0) returns a unique minimal block (it never frees and returns NULL);
 * on failure NULL is returned and p stays valid. */
NSALLOC_API void *nsalloc_realloc(void *p, size_t size);
NSALLOC_API void *nsalloc_reallocarray(void *p, size_t count, size_t size);
NSALLOC_API void nsalloc_free(void *p);
NSALLOC_API void nsalloc_free_sized(void *p, size_t size);
NSALLOC_API size_t nsalloc_usable_size(const void *p);
/* The usable size malloc(size) would give; 0 when size cannot be allocated. */
NSALLOC_API size_t nsalloc_good_size(size_t size);
NSALLOC_API NSALLOC_MALLOC_ATTRS void *nsalloc_aligned_alloc(size_t alignment, size_t size);
NSALLOC_API int nsalloc_posix_memalign(void **out, size_t alignment, size_t size);
NSALLOC_API NSALLOC_MALLOC_ATTRS void *nsalloc_memalign(size_t alignment, size_t size);
NSALLOC_API NSALLOC_MALLOC_ATTRS char *nsalloc_strdup(const char *s);
NSALLOC_API NSALLOC_MALLOC_ATTRS char *nsalloc_strndup(const char *s, size_t n);
/* O(1), never reads p's memory: does p point into memory this copy manages? */
NSALLOC_API bool nsalloc_owns(const void *p);

/* ---- first-class heaps ---------------------------------------------------- */
/* A heap is used by one thread at a time (its owner guarantees exclusive use;
 * it may move between threads). Blocks from a heap may be freed by any thread
 * with nsalloc_free(); nsalloc_heap_free() is the faster path for the thread
 * currently using the heap. */
typedef struct nsalloc_heap_s nsalloc_heap_t;

NSALLOC_API nsalloc_heap_t *nsalloc_heap_new(void);
/* Delete the heap; its live blocks stay valid and migrate to the calling
 * thread's default heap. */
NSALLOC_API void nsalloc_heap_delete(nsalloc_heap_t *heap);
/* Release the heap and every block in it at once. */
NSALLOC_API void nsalloc_heap_destroy(nsalloc_heap_t *heap);
NSALLOC_API NSALLOC_MALLOC_ATTRS void *nsalloc_heap_malloc(nsalloc_heap_t *heap, size_t size);
NSALLOC_API NSALLOC_MALLOC_ATTRS void *nsalloc_heap_calloc(nsalloc_heap_t *heap, size_t count,
                                                           size_t size);
NSALLOC_API void *nsalloc_heap_realloc(nsalloc_heap_t *heap, void *p, size_t size);
NSALLOC_API void *nsalloc_heap_reallocarray(nsalloc_heap_t *heap, void *p, size_t count,
                                            size_t size);
NSALLOC_API NSALLOC_MALLOC_ATTRS void *nsalloc_heap_aligned_alloc(nsalloc_heap_t *heap,
                                                                  size_t alignment, size_t size);
NSALLOC_API NSALLOC_MALLOC_ATTRS char *nsalloc_heap_strdup(nsalloc_heap_t *heap, const char *s);
NSALLOC_API NSALLOC_MALLOC_ATTRS char *nsalloc_heap_strndup(nsalloc_heap_t *heap, const char *s,
                                                            size_t n);
NSALLOC_API void nsalloc_heap_free(nsalloc_heap_t *heap, void *p);
NSALLOC_API bool nsalloc_heap_owns(const nsalloc_heap_t *heap, const void *p);
NSALLOC_API void nsalloc_heap_collect(nsalloc_heap_t *heap, bool force);

/* ---- statistics ----------------------------------------------------------- */
typedef struct nsalloc_stats_s {
  size_t in_use_bytes;       /* bytes in live blocks (at block-size granularity) */
  size_t in_use_blocks;      /* live blocks */
  size_t page_bytes;         /* bytes of pages holding blocks, plus huge blocks */
  size_t peak_page_bytes;    /* high-water mark of page_bytes */
  size_t committed_bytes;    /* memory that may be resident (not yet purged) */
  size_t reserved_bytes;     /* address space mapped from the OS */
  size_t segments;           /* live segments (huge ones included) */
  size_t pages;              /* pages assigned to a size class or object */
  size_t heaps;              /* live heaps (thread default heaps included) */
  size_t abandoned_segments; /* segments of exited threads awaiting reclaim */
  uint64_t os_maps;          /* successful mmap calls */
  uint64_t os_unmaps;        /* munmap calls */
  uint64_t purges;           /* ranges returned to the OS (madvise) */
  uint64_t foreign_pointers; /* pointers that were not this copy's */
  uint64_t forwarded;        /* foreign pointers handed to the forward hooks */
  uint64_t invalid_pointers; /* interior pointers and double frees detected */
} nsalloc_stats_t;

/* Whole-copy statistics; exact when no other thread is allocating. */
NSALLOC_API void nsalloc_stats(nsalloc_stats_t *out);
/* Statistics of the blocks and pages of one heap (NULL: the calling thread's
 * default heap). Copy-wide counters are left zero. */
NSALLOC_API void nsalloc_heap_stats(const nsalloc_heap_t *heap, nsalloc_stats_t *out);
/* Return free memory to the OS; force also retires every cached empty page and
 * reclaims abandoned segments. */
NSALLOC_API void nsalloc_collect(bool force);

/* ---- options ------------------------------------------------------------ */
/* Read once from the environment variable <PREFIX>OPTIONS (prefix upper-cased,
 * e.g. NSALLOC_OPTIONS), as "name=value,name=value" with the names
 * purge_delay_ms, segment_cache, foreign_policy (abort|report), huge_pages,
 * purge_thread and segment_huge_pages. */
typedef enum nsalloc_option_e {
  NSALLOC_OPTION_PURGE_DELAY_MS = 0, /* ms a segment's free pages stay resident after its last
                                      * free (default 500; a cached empty segment: while the
                                      * cache is in use, up to ten times that); 0 at once; -1
                                      * never (set at run time: pending purges wait until it is
                                      * a delay again) */
  NSALLOC_OPTION_SEGMENT_CACHE,      /* empty segments kept mapped for reuse (count, default 256,
                                      * 0 to NSALLOC_SEGMENT_CACHE_MAX); all unmapped at once
                                      * when the OS refuses a new mapping */
  NSALLOC_OPTION_FOREIGN_POLICY,     /* an nsalloc_policy_t */
  NSALLOC_OPTION_HUGE_PAGES,         /* transparent huge pages for huge blocks (above 2 MiB; Linux,
                                      * a no-op elsewhere): each fresh huge segment is advised
                                      * before it is first written. 0: never; 1 (default): like
                                      * segment_huge_pages=1, once a heap was created on a thread
                                      * other than the initial one (a single-threaded program's
                                      * block touched sparsely keeps 4 KiB pages); 2: always */
  NSALLOC_OPTION_PURGE_THREAD,       /* 1 (default): a thread of the copy, started when a purge is
                                      * first pending, purges what is due while the program does not
                                      * call the copy (not on Windows; a fork() child starts none
                                      * until this is set to 1 again; ThreadSanitizer builds
                                      * default to 0); 0: stops it, and only the copy's own calls
                                      * purge */
  NSALLOC_OPTION_SEGMENT_HUGE_PAGES, /* transparent huge pages for the normal (4 MiB) segments that
                                      * hold blocks up to 2 MiB (Linux; a no-op elsewhere): each
                                      * fresh one is advised before it is first written, so a
                                      * first touch faults 2 MiB at once. 0: never; 1 (default):
                                      * once a heap was created on a thread other than the initial
                                      * one (a single-threaded program's resident set stays as it
                                      * is); 2: always. Segments mapped before stay as they are */
  NSALLOC_OPTION_COUNT
} nsalloc_option_t;

/* The largest segment_cache accepted (a binding validating its own options
 * names this range). */
#define NSALLOC_SEGMENT_CACHE_MAX 1024

NSALLOC_API long nsalloc_option_get(nsalloc_option_t option);
/* Returns 0, or EINVAL for an unknown option or out-of-range value. */
NSALLOC_API int nsalloc_option_set(nsalloc_option_t option, long value);

/* ---- foreign and invalid pointers --------------------------------------- */
typedef enum nsalloc_policy_e {
  NSALLOC_POLICY_ABORT = 0, /* print a diagnostic and abort() (the default) */
  NSALLOC_POLICY_REPORT,    /* count, print a diagnostic, leave the block alone */
  NSALLOC_POLICY_FORWARD    /* hand foreign pointers to the forward hooks */
} nsalloc_policy_t;

/* Where a foreign pointer goes under NSALLOC_POLICY_FORWARD. Every callback is
 * called with ctx. Pointers that point INTO this copy but are invalid
 * (interior, double free) are never forwarded: they abort under ABORT and
 * FORWARD and are reported under REPORT. */
typedef struct nsalloc_forward_s {
  void *ctx;
  void (*free)(void *ctx, void *p);
  void *(*realloc)(void *ctx, void *p, size_t size);
  size_t (*usable_size)(void *ctx, const void *p); /* may be NULL: reports 0 */
} nsalloc_forward_t;

/* Returns 0, or EINVAL (FORWARD without free and realloc hooks). */
NSALLOC_API int nsalloc_set_foreign_policy(nsalloc_policy_t policy,
                                           const nsalloc_forward_t *forward);

/* nsalloc_free and nsalloc_realloc for a binding that serves several callers
 * with one copy, each with its own place for foreign blocks (CPython's three
 * allocator domains): a foreign pointer forwarded under NSALLOC_POLICY_FORWARD
 * reaches the forward hooks with `forward_ctx` instead of the registered ctx
 * (NULL: the registered one). Everything else, fast path included, is exactly
 * nsalloc_free/realloc. */
NSALLOC_API void nsalloc_forwarding_free(void *p, void *forward_ctx);
NSALLOC_API void *nsalloc_forwarding_realloc(void *p, size_t size, void *forward_ctx);

/* Diagnostics (one line, no trailing newline) go to stderr unless a handler is
 * set. The handler must not allocate from this copy. */
typedef void (*nsalloc_message_fn)(const char *message, void *arg);
NSALLOC_API void nsalloc_set_message_handler(nsalloc_message_fn handler, void *arg);
/* Emit one diagnostic line the copy's way: "nsalloc[<prefix> in <module>]: "
 * followed by the formatted text (at most ~1 KiB), to the handler or stderr.
 * For code built on the copy (bindings) whose messages must name the copy as
 * the core's own do. Does not allocate. */
NSALLOC_API NSALLOC_PRINTF_ATTRS void nsalloc_message(const char *format, ...);

/* ---- where segments come from ----------------------------------------------
 * By default segments are mmap'd. A host may supply its own source (e.g. a BEAM
 * NIF drawing from enif_alloc so the memory shows in erlang:memory()). alloc
 * returns `size` bytes aligned to `alignment` or NULL; free gets the same size.
 * Memory from a custom source is never decommitted. Call before the first
 * allocation; returns 0, or EBUSY once this copy has mapped memory. */
typedef struct nsalloc_os_source_s {
  void *ctx;
  void *(*alloc)(void *ctx, size_t size, size_t alignment);
  void (*free)(void *ctx, void *p, size_t size);
} nsalloc_os_source_t;
NSALLOC_API int nsalloc_set_os_source(const nsalloc_os_source_t *source);

/* ---- identity and lifetime ------------------------------------------------ */
NSALLOC_API const char *nsalloc_version(void);
NSALLOC_API const char *nsalloc_prefix(void);
/* Delete the thread-exit key and release cached memory, so nothing can call
 * back into this copy's code (run automatically when the module is unloaded).
 * Live blocks stay valid; threads that exit later no longer return their
 * caches. Idempotent. */
NSALLOC_API void nsalloc_shutdown(void);
/* For a module's unload hook, when no thread will allocate from this copy
 * again (e.g. a NIF's unload, just before dlclose): shut down, then return to
 * the OS every segment holding no live block, whichever thread's heap it
 * belongs to (threads that are still alive never give theirs back otherwise).
 * Segments with live blocks stay mapped, and their blocks can still be freed
 * (e.g. by resource destructors that run after the unload hook). */
NSALLOC_API void nsalloc_unload(void);

#ifdef __cplusplus
}
#endif
#endif /* NSALLOC_H */
