/*
 * nsalloc_uv.h - run libuv's allocations on an nsalloc copy.
 *
 * libuv has one process-wide allocator table (uv_replace_allocator) without a
 * context pointer; it must be installed before any other libuv call (or after
 * every libuv resource is freed), and it is called from the thread pool.
 * libuv also frees, through the same table, some blocks that the C library
 * allocated (scandir entries on Unix), so installing sets this copy's
 * foreign-pointer policy to forward such blocks to the C library.
 *
 * Include after <uv.h>, in code compiled with the copy's prefix.
 */
#ifndef NSALLOC_UV_H
#define NSALLOC_UV_H

#include "nsalloc.h"

#include <stdlib.h>
#include <uv.h>

static void nsalloc_uv_libc_free_(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

static void *nsalloc_uv_libc_realloc_(void *ctx, void *p, size_t size) {
  (void)ctx;
  return realloc(p, size);
}

/* Returns 0, or libuv's error code (UV_EINVAL when libuv is already in use). */
static inline int nsalloc_uv_install(void) {
  static const nsalloc_forward_t libc = {NULL, nsalloc_uv_libc_free_, nsalloc_uv_libc_realloc_,
                                         NULL};
  int rc = uv_replace_allocator(nsalloc_malloc, nsalloc_realloc, nsalloc_calloc, nsalloc_free);
  if (rc == 0) nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, &libc);
  return rc;
}

#endif /* NSALLOC_UV_H */
