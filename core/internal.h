/*
 * internal.h - types, constants and inline helpers shared by the core.
 *
 * The whole core is compiled as ONE translation unit (core/nsalloc.c includes
 * every core source file), so every internal function and variable is `static`:
 * the only names a build defines are the prefixed public API. That is what lets
 * any number of copies live in one process.
 *
 * Memory layout (sizes for the default NSALLOC_SEGMENT_SHIFT of 22)
 *   segment  SEGMENT_SIZE (4 MiB) aligned region from the OS, split into 64
 *            slices of 64 KiB. Slice 0 holds the segment header (this struct
 *            and the page descriptors); slices 1..63 hold pages.
 *   page     1..63 contiguous slices serving one block size: small bins use
 *            1 slice, medium bins 8 slices, a large object one exact span.
 *   huge     an object above LARGE_MAX gets a dedicated segment of its own
 *            (page-rounded) size; its block starts at slice 1, or at its
 *            alignment when that is larger.
 * Every block handed out is a block START (aligned requests pick a block size
 * that is a multiple of the alignment), so any other pointer into a page is
 * detectably invalid.
 */
#ifndef NSALLOC_INTERNAL_H
#define NSALLOC_INTERNAL_H

#define NSALLOC_BUILDING_CORE 1 /* nsalloc.h: define the API hidden unless NSALLOC_EXPORTS */
#include "nsalloc.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>

/* ---- targets ------------------------------------------------------------- */
/* The core needs 32- or 64-bit pointers, size_t as wide as a pointer, and
 * lock-free atomics on bytes, ints and pointers: the copy's shared words
 * (thread_free, the segment map, owner keys) must never fall back to
 * libatomic's locks, which are one table for the whole process and missing
 * where libatomic is not linked. It never needs 64-bit atomics (32-bit MIPS
 * and RISC-V lack them). A target without these stops here, before any
 * system header, rather than compile into code that traps or fails to link
 * (isolation.shape.unsupported_target). See docs/ports.md. */
#if UINTPTR_MAX != 0xffffffffu && UINTPTR_MAX != 0xffffffffffffffffu
#error "nsalloc: unsupported target: pointers must be 32 or 64 bits wide"
#endif
#if SIZE_MAX != UINTPTR_MAX
#error "nsalloc: unsupported target: size_t must be as wide as a pointer"
#endif
#if ATOMIC_POINTER_LOCK_FREE != 2 || ATOMIC_INT_LOCK_FREE != 2 || ATOMIC_CHAR_LOCK_FREE != 2
#error "nsalloc: unsupported target: no lock-free atomics on pointers, ints and bytes"
#endif
#define NSALLOC_32BIT (UINTPTR_MAX == 0xffffffffu)

#include "prim/prim.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define noinline    __attribute__((noinline))
/* For a fast path inlined into more than one exported function, which a
 * compiler might otherwise keep out of line once it grows (clang does for
 * free's). */
#define force_inline inline __attribute__((always_inline))

/* ---- geometry ----------------------------------------------------------- */
/* NSALLOC_SEGMENT_SHIFT (21..23, default 22: 4 MiB segments) is the one
 * layout knob; slices are always 1/64 of a segment. Copies built with
 * different shifts coexist (each has its own map and layout). */
#ifndef NSALLOC_SEGMENT_SHIFT
#define NSALLOC_SEGMENT_SHIFT 22
#endif
#if NSALLOC_SEGMENT_SHIFT < 21 || NSALLOC_SEGMENT_SHIFT > 23
#error "NSALLOC_SEGMENT_SHIFT must be 21, 22 or 23"
#endif
#define SEGMENT_SHIFT NSALLOC_SEGMENT_SHIFT
#define SEGMENT_SIZE  ((size_t)1 << SEGMENT_SHIFT)
#define SEGMENT_MASK  (SEGMENT_SIZE - 1)
#define SLICE_SHIFT   (SEGMENT_SHIFT - 6)
#define SLICE_SIZE    ((size_t)1 << SLICE_SHIFT)
#define SLICE_COUNT   (SEGMENT_SIZE / SLICE_SIZE) /* 64: one bit each in a uint64_t */
#define SLICES_ALL    (~(uint64_t)1)              /* slices 1..63: every page slice */
/* Huge segments are whole units, normal ones two: pages move between
 * segments a unit at a time (segment_fill.c). 2 MiB by default, the
 * transparent huge page size of x86-64, so a moved unit keeps its large page. */
#define HUGE_UNIT (SEGMENT_SIZE / 2)

#define MIN_ALIGN      16
#define DIRECT_MAX     1024                  /* sizes served by heap->direct[] */
#define DIRECT_COUNT   (DIRECT_MAX / 16 + 1) /* index (size + 15) >> 4 */
#define SMALL_PAGE_MAX (8 * 1024)            /* bins up to this use 1-slice pages */
#define MEDIUM_SLICES  8                     /* slices of a page for larger bins */
#define MEDIUM_MAX     (64 * 1024)           /* largest binned block size */
#define LARGE_MAX      (SEGMENT_SIZE / 2)    /* largest object in a shared segment */
#define BIN_COUNT      80                    /* bins 0..79 cover 16 B .. 64 KiB */
#define OS_PAGE        4096
/* The most an emptied only page of a bin keeps carved on its queue (page.c):
 * once a program goes idle each bin holds at most this much resident. */
#define PAGE_KEEP_CARVED (32 * 1024)

/* The ownership map covers the user address space in SEGMENT_SIZE units:
 * one byte per unit, so 32 MiB of (untouched until used) zero pages on x86-64
 * and 1 KiB for the whole 4 GiB of a 32-bit process. */
#if NSALLOC_32BIT
#define ADDRESS_BITS 32
#elif defined(__x86_64__)
#define ADDRESS_BITS 47
#else
#define ADDRESS_BITS 48
#endif
#define MAP_ENTRIES ((size_t)1 << (ADDRESS_BITS - SEGMENT_SHIFT))

/* page->thread_free packs, in one atomic word, the head of the list of blocks
 * freed by other threads, the number of blocks on the list and two flags in
 * the low bits (every block is 16-byte aligned). A page never holds more than
 * SLICE_SIZE / 16 blocks (a 1-slice page of 16-byte blocks): 8192 at most.
 *   64-bit: the head's address (below 2^48) in bits 4..47, the count in the
 *           top 16 bits.
 *   32-bit: an address would fill the word, so the head is the block's index
 *           in its page plus one (0: empty list) in bits 2..15 and the count
 *           is in the top 16 bits: no 64-bit atomic needed.
 * Read and write the head only through thread_free_head/thread_free_bits. */
#define TF_FULL      ((uintptr_t)1) /* page is off its queue: the next remote free notifies */
#define TF_NOTIFYING ((uintptr_t)2) /* a remote free is notifying: the owner must not collect */
#if NSALLOC_32BIT
#define TF_HEAD_SHIFT 2
#define TF_HEAD_MASK  ((uintptr_t)0xfffc)
#define TF_COUNT_ONE  ((uintptr_t)1 << 16)
_Static_assert((SLICE_SIZE / MIN_ALIGN + 1) << TF_HEAD_SHIFT <= TF_HEAD_MASK + 1,
               "every block index of a page fits the thread_free head");
#else
#define TF_HEAD_MASK ((((uintptr_t)1 << 48) - 1) & ~(uintptr_t)15)
#define TF_COUNT_ONE ((uintptr_t)1 << 48)
#endif

typedef struct block_s block_t;
typedef struct page_s page_t;
typedef struct segment_s segment_t;
typedef struct nsalloc_heap_s heap_t;

/* A free block. `tag` (word 1) holds its page's address while the block is
 * free and 0 while it is allocated: free() of a block whose tag already names
 * its page is a double free. Every block is at least 16 bytes. */
struct block_s {
  block_t *next;
  uintptr_t tag;
};

enum page_kind { PAGE_BINNED = 1, PAGE_LARGE, PAGE_HUGE };

struct page_s {
  /* Hot fields first: the malloc and free fast paths touch only these. */
  block_t *free;                /* blocks ready to allocate */
  block_t *local_free;          /* blocks freed by the owner thread */
  _Atomic(uintptr_t) owner;     /* owner key (heap.c) allowed the local fast path; 0: none */
  uint8_t *start;               /* first block */
  uint64_t div_magic;           /* floor(2^64 / block_size) + 1: see block_position() */
  _Atomic(size_t) carved_limit; /* block_position() of the first block not carved yet:
                                 * written by the owner when carving, read by any thread;
                                 * at most the page's span (see block_position()) */
  uint32_t used;                /* blocks allocated, not yet freed-and-collected: see page_used() */
  uint32_t capacity;            /* blocks carved so far */
  uint32_t reserved;            /* blocks that fit in the page */
  uint8_t in_full;              /* off its bin queue (large pages always are) */
  uint8_t untouched;            /* every slice was decommitted (reads as zero) when the page was
                                 * claimed: a large or huge block needs no zeroing */
  uint8_t bin;
  uint8_t slice_index;
  uint8_t empty_slow; /* EMPTY_*: why the owner's free that empties the page must
                       * leave the fast path (free_local); 0: the page stays as it is */
  /* Read by the statistics walk from other threads, hence atomic (relaxed). */
  _Atomic(uint8_t) kind; /* enum page_kind; 0 while the slices are free */
  _Atomic(uint8_t) slice_count;
  _Atomic(size_t) block_size;
  _Atomic(uintptr_t) thread_free; /* blocks freed by other threads (TF_* packing) */
  page_t *next, *prev;            /* bin queue links */
};

/* page->empty_slow. A queued page that empties stays on its queue, blocks
 * and all, only when it is the only page of its bin and carved no further
 * than PAGE_KEEP_CARVED (page_retire_if_unused): a malloc/free pair in a
 * loop then never leaves the fast path. */
enum {
  EMPTY_LINKED = 1, /* it has neighbours on its queue: it goes back to its segment */
  EMPTY_CARVED = 2  /* it was carved past PAGE_KEEP_CARVED: it becomes its bin's spare */
};

enum segment_kind { SEGMENT_NORMAL = 1, SEGMENT_HUGE };

/* The first bytes of every segment of every copy (signature.c): how a copy
 * recognises another copy's segment without any state shared between them.
 * Its layout is fixed whatever the build (fixed-width fields, no pointers
 * read back): copies of other versions and segment sizes read it. */
#define SIGNATURE_PREFIX_BYTES 32
typedef struct segment_signature_s {
  uint64_t magic; /* SIGNATURE_MAGIC */
  uint64_t check; /* signature_check(): binds the fields below to this address */
  uint64_t size;  /* bytes of the segment (a huge one's too) */
  uint64_t owner; /* address of the owning copy's state: names its module */
  char prefix[SIGNATURE_PREFIX_BYTES]; /* the owner's prefix, NUL-terminated (truncated) */
} segment_signature_t;

struct segment_s {
  segment_signature_t signature;    /* first: at the segment's base, for every copy */
  page_t *page_of[SLICE_COUNT];     /* slice -> head page descriptor; &unused_page when free */
  page_t pages[SLICE_COUNT];        /* descriptor of the page starting at each slice */
  _Atomic(heap_t *) heap;           /* owning heap; NULL while abandoned or cached */
  segment_t *heap_next, *heap_prev; /* the heap's list (normal segments) */
  segment_t *span_next, *span_prev; /* the heap's list of segments with this longest run */
  uint8_t span_run;                 /* its span list: >= its longest run of free slices */
  segment_t *copy_next, *copy_prev; /* every live segment of the copy */
  segment_t *list_next;             /* abandoned list or cache */
  uint64_t free_slices;             /* bit i: slice i holds no page */
  uint64_t decommitted;             /* bit i: slice i is not resident (fresh or purged) and
                                     * reads as zero where PRIM_PURGE_ZEROES */
  uint64_t purge_at_ms;             /* when free resident slices are purged; 0: nothing due */
  uint64_t zapped;                  /* bit i: free slice i may have lost part of its contents to
                                     * a purge that failed part way (neither resident as left nor
                                     * decommitted): no spare there is taken back; a claim clears
                                     * it */
  uint64_t spare_slices;            /* bit i: free slice i may hold a spare's blocks (spare_of):
                                     * claims take such slices last (owner only) */
  size_t size;                      /* bytes mapped */
  size_t huge_extent;               /* huge: no byte at or past this offset is resident */
  _Atomic(int) full_page_freed;     /* a remote free hit a page that is off its queue */
  _Atomic(uint8_t) slices_lock;     /* held to change or purge the free slices of a segment
                                     * on a heap (segment_lock: the owner against the purger) */
  uint8_t kind;                     /* enum segment_kind */
  /* 1 + the head slice of the spare page (page.c) whose blocks free slice i
   * still holds, intact while the entry stays; 0: none. A claim zeroes its
   * slices' entries. Ids, not bits: a bit left by a spare that a claim cut
   * short could complete another spare's mask over the claimed blocks.
   * Owner only. */
  uint8_t spare_of[SLICE_COUNT];
};

typedef struct page_queue_s {
  page_t *first, *last;
  page_t *spare; /* an emptied page whose slices are free but whose blocks may be taken back */
} page_queue_t;

struct nsalloc_heap_s {
  page_t *direct[DIRECT_COUNT]; /* size (rounded to 16) -> first page of its bin */
  page_queue_t bins[BIN_COUNT];
  uintptr_t owner;     /* owner key of its pages: the thread id of a default heap,
                        * the heap's own address for a first-class heap */
  segment_t *segments; /* every normal segment, in no particular order */
  /* spans[r]: the segments whose span_run is r (1..63): a bound from above
   * on their longest run of free slices, exact when filed, stale after a
   * claim, refiled when a free exceeds it or a search finds it too short
   * (segment_page_alloc). A segment of span_run 0 is on none.
   * Bit r of span_mask: spans[r] is not empty. */
  segment_t *spans[SLICE_COUNT];
  uint64_t span_mask;
  _Atomic(int) full_page_freed; /* some segment of this heap has full_page_freed */
  uint64_t purge_at_ms;         /* earliest purge due in this heap's segments */
  uint32_t slow_paths;          /* malloc slow paths taken (paces the purge check) */
  heap_t *next, *prev;          /* the copy's heap list */
  uint32_t magic;               /* HEAP_MAGIC while live: validates user handles */
  uint32_t epoch;               /* copy.epoch when its thread joined the exit key */
};
#define HEAP_MAGIC 0x6e736870u

/* A first-class heap (nsalloc_heap_new) is its own pages' owner key; a
 * thread's default heap uses the thread id. */
static inline bool heap_is_first_class(const heap_t *heap) {
  return heap->owner == (uintptr_t)heap;
}

#define relaxed_load(p)     atomic_load_explicit((p), memory_order_relaxed)
#define relaxed_store(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)

static inline size_t align_up(size_t n, size_t a) {
  return (n + a - 1) & ~(a - 1);
}
static inline bool is_power_of_two(size_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}
static inline segment_t *segment_of(const void *p) {
  return (segment_t *)((uintptr_t)p & ~(uintptr_t)SEGMENT_MASK);
}
static inline uint8_t *slice_address(segment_t *seg, size_t index) {
  return (uint8_t *)seg + (index << SLICE_SHIFT);
}
/* ThreadSanitizer builds (gcc defines __SANITIZE_THREAD__, clang has the
 * feature test) make the owner's updates of page->used atomic; see below. */
#if defined(__SANITIZE_THREAD__)
#define NSALLOC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NSALLOC_TSAN 1
#endif
#endif

/* page->used is written only by the thread that owns the page (malloc, its
 * own frees, collection), so it is a plain field that the owner updates with
 * one read-modify-write instruction on the fast paths (a C11 atomic would cost
 * a separate load and store on each). The only readers on other threads are
 * the statistics walk and unload's scan for live blocks, which read it with an
 * atomic load (page_used_snapshot): a whole old or new count, on every target
 * whose aligned 32-bit stores are single instructions. In C11's terms that
 * plain write against an atomic read is still a data race; it is confined to
 * these statistics, whose result is documented as a snapshot. Under
 * ThreadSanitizer the owner's accesses are relaxed atomics too, so the checker
 * sees no plain access racing with the snapshot. */
static inline uint32_t page_used(const page_t *page) { /* owner only */
#if defined(NSALLOC_TSAN)
  return __atomic_load_n(&page->used, __ATOMIC_RELAXED);
#else
  return page->used;
#endif
}
static inline void page_used_set(page_t *page, uint32_t used) { /* owner only */
#if defined(NSALLOC_TSAN)
  __atomic_store_n(&page->used, used, __ATOMIC_RELAXED);
#else
  page->used = used;
#endif
}
static inline uint32_t page_used_snapshot(const page_t *page) { /* any thread */
  return __atomic_load_n(&page->used, __ATOMIC_RELAXED);
}

/* The free fast path reads three fields that other threads write - a segment
 * map entry, a page's owner key and its carved_limit - each once, to compare
 * it. gcc emits every atomic load, even a relaxed one, as an instruction of
 * its own, where a plain load folds into the comparison: fast_load() is that
 * plain load (three instructions fewer per free). It returns what a relaxed
 * load returns, an old or a new value: each is one aligned load of a
 * lock-free object no wider than a word, which no supported target tears, and
 * the _Atomic type has its plain type's size and representation there
 * (asserted below). Under ThreadSanitizer it is the relaxed load itself. */
#if defined(NSALLOC_TSAN)
#define fast_load(type, p) ((type)relaxed_load(p))
#else
#define fast_load(type, p) (*(const type *)(p))
#endif
_Static_assert(sizeof(_Atomic(size_t)) == sizeof(size_t) &&
                   sizeof(_Atomic(uintptr_t)) == sizeof(uintptr_t) &&
                   sizeof(_Atomic(uint8_t)) == sizeof(uint8_t),
               "fast_load(): an _Atomic field has its plain type's size");

static inline uint64_t slice_mask(size_t index, size_t count) {
  return (count >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << count) - 1)) << index;
}
/* Where p lies in its page, as one number: with M = div_magic and
 * E = block_size * M mod 2^64 (1 <= E <= block_size), an offset
 * x = k * block_size + r maps to x * M mod 2^64 = k * E + r * M. For a block
 * start (r = 0) that is k * E, below M and increasing with k; for any other
 * offset it is at least M (no wrap-around: (k + 1) * E <= span + block_size,
 * a few MiB, far below M >= 2^64 / LARGE_MAX). So "p is the start of a
 * carved block" is the single comparison position < carved_limit, where
 * carved_limit = capacity * E < M (and at most capacity * block_size, within
 * the page: a size_t, so 32-bit targets need no 64-bit atomic for it); the
 * partial block at a page's end and every block not carved yet fail it. Pages without blocks
 * (unused_page, huge pages) have M = carved_limit = 0: nothing passes. A large page grown in place
 * (segment_large_grow) keeps the M and E of its size at birth: its block (k = 0, r = 0) is still
 * the only offset below carved_limit = E. */
static inline uint64_t block_position(const page_t *page, const void *p) {
  return (uint64_t)((const uint8_t *)p - page->start) * page->div_magic;
}

/* The head of a page's thread_free list, from its packed word (TF_* above). */
static inline block_t *thread_free_head(const page_t *page, uintptr_t word) {
#if NSALLOC_32BIT
  size_t index = (word & TF_HEAD_MASK) >> TF_HEAD_SHIFT;
  if (index == 0) return NULL;
  return (block_t *)(page->start + (index - 1) * relaxed_load(&page->block_size));
#else
  (void)page;
  return (block_t *)(word & TF_HEAD_MASK);
#endif
}
/* `block`, a block of `page`, as the head bits of its thread_free word. */
static inline uintptr_t thread_free_bits(const page_t *page, const block_t *block) {
#if NSALLOC_32BIT
  size_t index = (size_t)((const uint8_t *)block - page->start) / relaxed_load(&page->block_size);
  return (uintptr_t)(index + 1) << TF_HEAD_SHIFT;
#else
  (void)page;
  return (uintptr_t)block;
#endif
}

/* ---- options, copy state --------------------------------------------------- */
/* What a pointer handed to free/realloc/usable_size is (locate.c). */
enum locate_result {
  LOCATE_OWN,         /* a live block start of this copy */
  LOCATE_FOREIGN,     /* not this copy's memory */
  LOCATE_INTERIOR,    /* inside a page of this copy, not a block start */
  LOCATE_UNALLOCATED, /* this copy's memory, but no page or block is there */
  LOCATE_DOUBLE_FREE  /* a block start whose block is already free */
};

/* The API operation a diagnostic names. */
/* Addresses are printed as 0x<hex> on every platform (the C library's %p
 * differs: Windows prints zero-padded hex without 0x). */
#define ADDRESS_FORMAT "0x%" PRIxPTR

enum api_op {
  OP_MALLOC,
  OP_FREE,
  OP_REALLOC,
  OP_USABLE_SIZE,
  OP_FREE_SIZED,
  OP_HEAP_FREE,
  OP_HEAP_DELETE,
  OP_HEAP_DESTROY,
  OP_HEAP_COLLECT
};

/* The copy's one global state. Each copy of the core has its own instance
 * (static storage in its own module): nothing here is shared between copies. */
typedef struct copy_state_s {
  prim_lock_t lock;               /* segments, heaps, abandoned list, cache, metadata */
  _Atomic(uintptr_t) fork_holder; /* the thread inside fork() holding `lock`, else 0 */
  prim_once_t once;
  prim_key_t thread_key;
  bool key_live;
  bool unloaded;                 /* the module's destructor ran: never start again */
  _Atomic(bool) running;         /* started (key live or failed), not shut down */
  _Atomic(bool) shut_down;       /* shut down: no segment cache */
  _Atomic(uint32_t) epoch;       /* starts so far; a heap registered in an older one re-joins */
  _Atomic(size_t) exits_inside;  /* threads inside thread_done (init.c: the exit gate) */
  _Atomic(bool) exits_closed;    /* the copy is being released: exits leave it alone */
  _Atomic(size_t) forks_pending; /* fork()s waiting for the exits inside the gate */
  segment_t *segments;           /* every live segment (normal, huge, cached) */
  segment_t *abandoned;          /* segments of exited threads */
  _Atomic(size_t) abandoned_count;
  segment_t *cache; /* empty segments kept for reuse */
  size_t cache_count;
  uint64_t cache_used_ms;       /* when a segment was last put in or taken from the cache */
  _Atomic(uint32_t) purge_hint; /* no purge is due in any segment before this (purger.c); 0: none */
  heap_t *heaps;                /* live heaps */
  heap_t *free_heaps;           /* recycled heap descriptors (metadata is never unmapped) */
  size_t heap_pool_used;        /* descriptors taken from heap.c's static pool */
  uint8_t *meta_bump, *meta_end;               /* mmap'd descriptor chunk beyond the pool */
  _Atomic(long) options[NSALLOC_OPTION_COUNT]; /* set by any thread at run time, read by all
                                                * (the purger too): copy_option() */
  nsalloc_forward_t forward;
  bool forward_is_fallback; /* `forward` is the build's fixed fallback (NSALLOC_DEFAULT_FORWARD:
                             * the C library), which never gets another copy's block */
  nsalloc_message_fn message_fn;
  void *message_arg;
  nsalloc_os_source_t os_source; /* alloc == NULL: mmap */
  _Atomic(bool) os_used;
  _Atomic(bool) multi_threaded; /* a heap was created on a thread other than the initial one
                                 * (heap_create); never cleared */
  /* copy-wide counters (slow paths only). The event counters (uint64_t in
   * nsalloc_stats_t) are words too, so a 32-bit target needs no 64-bit
   * atomic: there they count modulo 2^32 (docs/ports.md). */
  _Atomic(size_t) page_bytes, peak_page_bytes, committed, reserved;
  _Atomic(size_t) os_maps, os_unmaps, purges, foreign, forwarded, invalid;
} copy_state_t;

static copy_state_t copy;

/* An option's current value: any thread may read it while another sets it
 * (nsalloc_option_set), hence a relaxed atomic. */
#define copy_option(option) relaxed_load(&copy.options[option])

static _Atomic(uint8_t) segment_map[MAP_ENTRIES];
/* What page_of[] names for a slice without a page (and for slice 0): kind 0
 * and owner 0, so the free fast path falls through to the checked path. */
static page_t unused_page;

/* ---- cross-file internal interface (all static: one translation unit) ---- */
/* size_class.c */
static size_t bin_of(size_t size);
static size_t bin_block_size(size_t bin);
static size_t bin_for_alignment(size_t size, size_t alignment);
/* os.c */
static void *os_alloc_aligned(size_t size, size_t alignment);
static void os_free(void *p, size_t size);
static bool os_purge(void *p, size_t size);
static void os_hint_huge_block(void *p, size_t size);
static bool os_hint_normal_segment(void *p);
static bool os_moves_pages(void);
static void os_move(void *dst, void *src, size_t size, bool keep);
static size_t os_page_size(void);
/* segment_map.c */
static void segment_map_set(segment_t *seg);
static void segment_map_clear(segment_t *seg);
static void segment_map_shrink(segment_t *seg, size_t size);
static segment_t *segment_map_lookup(const void *p);
/* signature.c */
static void signature_write(segment_t *seg);
static void signature_erase(segment_t *seg);
static bool signature_find(const void *p, segment_signature_t *out);
/* policy.c */
static void diagnose(enum api_op op, const void *p, const char *what, bool fatal);
static void foreign_free(enum api_op op, void *p, void *forward_ctx);
static void *foreign_realloc(void *p, size_t size, void *forward_ctx);
static size_t foreign_usable_size(const void *p);
static void invalid_pointer(enum api_op op, const void *p, enum locate_result why);
/* options.c */
static void options_init(void);
/* page.c */
static void page_init(page_t *page, size_t block_size, size_t bin, uintptr_t owner);
static bool page_extend(page_t *page);
static void page_collect(page_t *page);
static size_t page_pending_remote(const page_t *page);
static void page_queue_push_front(heap_t *heap, page_t *page);
static void page_queue_push_back(heap_t *heap, page_t *page);
static void page_queue_remove(heap_t *heap, page_t *page);
static bool page_settle(heap_t *heap, page_t *page, bool requeue);
static void page_unpark(heap_t *heap, page_t *page);
static void page_retire_if_unused(heap_t *heap, page_t *page);
static void page_notify_owner(page_t *page);
/* segment.c */
static page_t *segment_page_alloc(heap_t *heap, size_t count, size_t align);
static bool segment_large_grow(page_t *page, size_t count);
static bool segment_page_free(heap_t *heap, page_t *page);
static bool segment_page_spare(heap_t *heap, page_t *page);
static bool segment_spare_take(heap_t *heap, page_t *page);
static void segment_spare_forget(page_t *page);
static page_t *segment_next_page(segment_t *seg, size_t *index);
static void segment_drop(segment_t *seg);
static bool segment_has_live_blocks(segment_t *seg);
static void segment_unlink_heap(heap_t *heap, segment_t *seg);
static page_t *segment_huge_alloc(heap_t *heap, size_t size, size_t alignment);
static void segment_huge_free(segment_t *seg);
static void segment_unmap(segment_t *seg);
static void segment_abandon(segment_t *seg);
static void segment_abandoned_freed(void);
static void segment_release(segment_t *seg);
static segment_t *segment_reclaim(void);
static void segment_purge(segment_t *seg, bool force, uint64_t now);
static void segment_copy_purge(bool force, uint64_t now);
static void segment_link_heap(heap_t *heap, segment_t *seg);
static void segment_lock(segment_t *seg);
static void segment_unlock(segment_t *seg);
/* segment_fill.c */
static size_t segment_fill_from_cache(uint8_t *dest, size_t size);
static page_t *segment_huge_grow(heap_t *heap, page_t *page, size_t size);
/* purger.c */
static void purger_note(uint64_t due);
static uint64_t purger_hint_wait(uint64_t now);
static bool purger_running(void);
static void purger_stop(void);
static void purger_option_set(bool on);
static void purge_delay_resumed(long delay);
static void purger_forget(void);
/* locate.c */
static enum locate_result locate(const void *p, page_t **page_out);
static size_t page_usable_size(const page_t *page);
/* heap.c */
static heap_t *heap_default(void);
static void *heap_malloc_slow(size_t size, heap_t *heap, size_t alignment, bool zero);
static bool heap_adopt_segment(heap_t *heap, segment_t *seg);
static void thread_done(void *heap);
/* free.c */
static void free_checked(void *p, heap_t *local_heap, enum api_op op, void *forward_ctx);
/* stats.c */
static void stats_page_bytes(ptrdiff_t delta);
static void stats_committed(ptrdiff_t delta);
/* init.c */
static void copy_init(void);
static void copy_lock(void);
static void copy_unlock(void);
static void copy_thread_join(heap_t *heap);
static bool copy_exit_begin(void);
static void copy_exit_end(void);

#endif /* NSALLOC_INTERNAL_H */
