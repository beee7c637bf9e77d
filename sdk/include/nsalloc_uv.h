/*
 * nsalloc_uv.h - run libuv's allocations on an nsalloc copy.
 *
 * libuv has one process-wide allocator table (uv_replace_allocator) without a
 * context pointer; it must be installed before any other libuv call (or after
 * every libuv resource is freed), and it is called from the thread pool, so
 * the thread-safe default-heap API is what it gets. Buffers the C library
 * allocates for libuv (scandir entries, realpath results) are freed by libuv
 * with the C library's own free(), so nothing foreign reaches this copy.
 *
 * Include after <uv.h>, in code compiled with the copy's prefix.
 */
#ifndef NSALLOC_UV_H
#define NSALLOC_UV_H

#include "nsalloc.h"

#include <uv.h>

/* Returns 0, or libuv's error code. */
static inline int nsalloc_uv_install(void) {
  return uv_replace_allocator(nsalloc_malloc, nsalloc_realloc, nsalloc_calloc, nsalloc_free);
}

#endif /* NSALLOC_UV_H */
