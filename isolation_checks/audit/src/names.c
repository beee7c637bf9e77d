/* names.c - bounded name samples and sorted name sets (see names.h). */
#include "names.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

void sample_add(sample_t *sample, const char *name) {
  sample->count++;
  size_t at = 0;
  while (at < sample->kept) {
    int order = strcmp(name, sample->names[at]);
    if (order == 0) return;
    if (order < 0) break;
    at++;
  }
  if (at == SAMPLE_MAX) return;
  if (sample->kept == SAMPLE_MAX)
    free(sample->names[SAMPLE_MAX - 1]);
  else
    sample->kept++;
  memmove(&sample->names[at + 1], &sample->names[at],
          (sample->kept - 1 - at) * sizeof sample->names[0]);
  sample->names[at] = xstrdup(name);
}

void sample_free(sample_t *sample) {
  for (size_t i = 0; i < sample->kept; i++)
    free(sample->names[i]);
  memset(sample, 0, sizeof *sample);
}

/* Index of the first item not less than name. */
static size_t nameset_lower_bound(const nameset_t *set, const char *name) {
  size_t lo = 0, hi = set->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(set->items[mid], name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void nameset_add(nameset_t *set, const char *name) {
  size_t at = nameset_lower_bound(set, name);
  if (at < set->len && strcmp(set->items[at], name) == 0) return;
  if (set->len == NAMESET_LIMIT) {
    set->overflowed = true;
    return;
  }
  xgrow((void **)&set->items, &set->cap, set->len, sizeof set->items[0]);
  memmove(&set->items[at + 1], &set->items[at], (set->len - at) * sizeof set->items[0]);
  set->items[at] = xstrdup(name);
  set->len++;
}

bool nameset_contains(const nameset_t *set, const char *name) {
  size_t at = nameset_lower_bound(set, name);
  return at < set->len && strcmp(set->items[at], name) == 0;
}

void nameset_free(nameset_t *set) {
  for (size_t i = 0; i < set->len; i++)
    free(set->items[i]);
  free(set->items);
  memset(set, 0, sizeof *set);
}
