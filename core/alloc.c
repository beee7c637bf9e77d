/*
 * alloc.c - the allocation API: malloc and friends, for the thread's default
 * heap and for first-class heaps, through one set of heap-parameterised
 * functions.
 */
#include "internal.h"

/* The malloc fast path: pop the first free block of the size's page. */
static inline void *heap_alloc(heap_t *heap, size_t size) {
  if (likely(size <= DIRECT_MAX)) {
    page_t *page = heap->direct[(size + 15) >> 4];
    block_t *block = page->free;
    if (likely(block != NULL)) return page_take(page, block);
  }
  return heap_malloc_slow(size, heap, 0, false);
}

static void *heap_calloc_impl(heap_t *heap, size_t count, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  if (total > MEDIUM_MAX) return heap_malloc_slow(total, heap, 0, true);
  void *p = heap_alloc(heap, total);
  if (p) memset(p, 0, total);
  return p;
}

static void *heap_aligned_impl(heap_t *heap, size_t alignment, size_t size) {
  if (alignment <= MIN_ALIGN) {
    if (!is_power_of_two(alignment)) {
      errno = EINVAL;
      return NULL;
    }
    return heap_alloc(heap, size);
  }
  /* Above MIN_ALIGN, alignment is not 0: one test tells a power of two
   * (is_power_of_two's zero test would be one compare and branch more). */
  if ((alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return NULL;
  }
  /* Fast path: the size's next free block when it happens to be aligned. It
   * always is in a bin whose block size is a multiple of the alignment (pages
   * start on slice boundaries), which is the bin the slow path picks for
   * small sizes; otherwise the slow path finds an aligned page. */
  if (likely(size <= DIRECT_MAX)) {
    page_t *page = heap->direct[(size + 15) >> 4];
    block_t *block = page->free;
    if (likely(block != NULL && ((uintptr_t)block & (alignment - 1)) == 0))
      return page_take(page, block);
  }
  return heap_malloc_slow(size, heap, alignment, false);
}

/* Resize p: in place while the new size still fits its block (and does not
 * waste more than half of it) or, for a large block of `heap` itself, while
 * the slices after it are free; a huge block grows in place within its
 * segment's units, or by moving its pages into a larger segment
 * (segment_huge_grow); else allocate from `heap`, copy, and free p.
 * A live block is recognised on free's fast check; anything else is
 * classified by locate(). Failure leaves p untouched. */
static void *heap_realloc_impl(heap_t *heap, void *p, size_t size, void *forward_ctx) {
  if (!p) return heap_alloc(heap, size);
  page_t *page = live_block_page(p);
  if (!page) {
    enum locate_result where = locate(p, &page);
    if (where == LOCATE_FOREIGN) return foreign_realloc(p, size, forward_ctx);
    if (where != LOCATE_OWN) {
      invalid_pointer(OP_REALLOC, p, where);
      errno = EINVAL;
      return NULL;
    }
  }
  size_t usable = page_usable_size(page);
  if (size <= usable && (size >= usable / 2 || nsalloc_good_size(size) == usable)) return p;
  if (size > usable && size <= LARGE_MAX && relaxed_load(&page->kind) == PAGE_LARGE &&
      relaxed_load(&segment_of(page)->heap) == heap &&
      segment_large_grow(page, align_up(size, SLICE_SIZE) >> SLICE_SHIFT))
    return p;
  if (size > usable && relaxed_load(&page->kind) == PAGE_HUGE) {
    page_t *grown = segment_huge_grow(heap, page, size);
    if (grown) return grown->start;
  }
  void *q = heap_alloc(heap, size);
  if (!q) return NULL;
  memcpy(q, p, size < usable ? size : usable);
  if (relaxed_load(&page->kind) == PAGE_HUGE) {
    segment_huge_free(segment_of(page));
    purger_poll();
  } else {
    free_block(page, p, heap);
  }
  return q;
}

static void *heap_reallocarray_impl(heap_t *heap, void *p, size_t count, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return heap_realloc_impl(heap, p, total, NULL);
}

/* A NUL-terminated copy of the first `length` bytes of s. */
static char *heap_string_copy(heap_t *heap, const char *s, size_t length) {
  char *copy = heap_alloc(heap, length + 1);
  if (copy) {
    memcpy(copy, s, length);
    copy[length] = '\0';
  }
  return copy;
}

/* ---- default heap ----------------------------------------------------------- */
void *nsalloc_malloc(size_t size) {
  return heap_alloc(thread_heap(), size);
}
void *nsalloc_calloc(size_t count, size_t size) {
  return heap_calloc_impl(thread_heap(), count, size);
}
void *nsalloc_realloc(void *p, size_t size) {
  return heap_realloc_impl(thread_heap(), p, size, NULL);
}
void *nsalloc_forwarding_realloc(void *p, size_t size, void *forward_ctx) {
  return heap_realloc_impl(thread_heap(), p, size, forward_ctx);
}
void *nsalloc_reallocarray(void *p, size_t count, size_t size) {
  return heap_reallocarray_impl(thread_heap(), p, count, size);
}
void *nsalloc_aligned_alloc(size_t alignment, size_t size) {
  return heap_aligned_impl(thread_heap(), alignment, size);
}
void *nsalloc_memalign(size_t alignment, size_t size) {
  return heap_aligned_impl(thread_heap(), alignment, size);
}
int nsalloc_posix_memalign(void **out, size_t alignment, size_t size) {
  if (!is_power_of_two(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
  void *p = heap_aligned_impl(thread_heap(), alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
char *nsalloc_strdup(const char *s) {
  return heap_string_copy(thread_heap(), s, strlen(s));
}
char *nsalloc_strndup(const char *s, size_t n) {
  return heap_string_copy(thread_heap(), s, strnlen(s, n));
}

/* Everything the fast check could not vouch for. Out of line: locate()'s
 * out-parameter would give nsalloc_usable_size a stack frame. */
static noinline size_t usable_size_checked(const void *p) {
  if (!p) return 0;
  page_t *page;
  enum locate_result where = locate(p, &page);
  if (where == LOCATE_FOREIGN) return foreign_usable_size(p);
  if (where != LOCATE_OWN) {
    invalid_pointer(OP_USABLE_SIZE, p, where);
    return 0;
  }
  return page_usable_size(page);
}

size_t nsalloc_usable_size(const void *p) {
  page_t *page = live_block_page(p);
  if (likely(page != NULL)) return page_usable_size(page);
  return usable_size_checked(p);
}

/* ---- first-class heaps -------------------------------------------------- */
void *nsalloc_heap_malloc(nsalloc_heap_t *heap, size_t size) {
  return heap_alloc(heap, size);
}
void *nsalloc_heap_calloc(nsalloc_heap_t *heap, size_t count, size_t size) {
  return heap_calloc_impl(heap, count, size);
}
void *nsalloc_heap_realloc(nsalloc_heap_t *heap, void *p, size_t size) {
  return heap_realloc_impl(heap, p, size, NULL);
}
void *nsalloc_heap_reallocarray(nsalloc_heap_t *heap, void *p, size_t count, size_t size) {
  return heap_reallocarray_impl(heap, p, count, size);
}
void *nsalloc_heap_aligned_alloc(nsalloc_heap_t *heap, size_t alignment, size_t size) {
  return heap_aligned_impl(heap, alignment, size);
}
char *nsalloc_heap_strdup(nsalloc_heap_t *heap, const char *s) {
  return heap_string_copy(heap, s, strlen(s));
}
char *nsalloc_heap_strndup(nsalloc_heap_t *heap, const char *s, size_t n) {
  return heap_string_copy(heap, s, strnlen(s, n));
}
