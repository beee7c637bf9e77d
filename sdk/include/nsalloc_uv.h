/*
 * nsalloc_uv.h - run libuv's allocations on an nsalloc copy.
 *
 * libuv has one process-wide allocator table (uv_replace_allocator) without a
 * context pointer; it must be installed before any other libuv call (or after
 * every libuv resource is freed), and it is called from the thread pool, so
 * the thread-safe default-heap API is what it gets.
 *
 * libuv also frees, with the replaced free, buffers the C library allocated
 * for it: realpath(3)'s result (uv_fs_realpath, then uv_fs_req_cleanup; in
 * libuv 1.44.2 the only one: scandir's entries it frees with the C library's
 * free itself), and possibly more in other versions and platforms. Those are foreign to the
 * copy, so nsalloc_uv_install() sets the copy's foreign-pointer policy to
 * forward them to the C library's free and realloc. That policy holds for
 * the whole copy, not only for libuv's calls: a pointer of another
 * allocator freed through this copy anywhere in the program then goes to
 * the C library too (a pointer inside the copy that is not a live block
 * still aborts). Do not install libuv on a copy whose foreign pointers must
 * go elsewhere.
 *
 * Include after <uv.h>, in code compiled with the copy's prefix.
 */
#ifndef NSALLOC_UV_H
#define NSALLOC_UV_H

#include "nsalloc.h"

#include <stdlib.h>
#include <uv.h>

static void nsalloc_uv_libc_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

static void *nsalloc_uv_libc_realloc(void *ctx, void *p, size_t size) {
  (void)ctx;
  return realloc(p, size);
}

/* Returns 0, or libuv's error code. */
static inline int nsalloc_uv_install(void) {
  static const nsalloc_forward_t to_libc = {NULL, nsalloc_uv_libc_free, nsalloc_uv_libc_realloc,
                                            NULL};
  if (nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, &to_libc) != 0) return UV_EINVAL;
  return uv_replace_allocator(nsalloc_malloc, nsalloc_realloc, nsalloc_calloc, nsalloc_free);
}

#endif /* NSALLOC_UV_H */
