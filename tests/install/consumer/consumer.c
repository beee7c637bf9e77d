/* consumer.c - allocates through whichever copy it was built against. */
#include "nsalloc.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  char *s = nsalloc_strdup("installed");
  int ok = s && strcmp(s, "installed") == 0 && nsalloc_owns(s) &&
           strcmp(nsalloc_prefix(), EXPECTED_PREFIX) == 0;
  nsalloc_free(s);
  printf("%s: %s\n", nsalloc_prefix(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
