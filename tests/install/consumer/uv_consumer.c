/* uv_consumer.c - libuv on an installed copy: nsalloc_uv.h must be found
 * beside nsalloc.h, and a buffer the C library allocated for libuv
 * (realpath's result, freed by uv_fs_req_cleanup) is forwarded back to it. */
#include <uv.h>

#include "nsalloc_uv.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  if (nsalloc_uv_install() != 0) return 1;
  uv_fs_t req;
  int rc = uv_fs_realpath(NULL, &req, "/", NULL);
  int ok = rc == 0 && strcmp((const char *)req.ptr, "/") == 0;
  uv_fs_req_cleanup(&req);
  printf("%s libuv: %s\n", nsalloc_prefix(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
