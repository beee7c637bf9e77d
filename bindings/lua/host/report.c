/*
 * report.c - printing a state's statistics.
 */
#include "report.h"

#include <inttypes.h>

void host_report_stats(FILE *out, const char *when, const nsalloc_lua_stats_t *stats) {
  fprintf(out, "nsalloc-lua stats (%s, copy %s):\n", when, stats->copy);
  fprintf(out, "  in use      %zu bytes (heap blocks %zu bytes, pages %zu bytes)\n",
          stats->in_use_bytes, stats->heap_bytes, stats->heap_page_bytes);
  fprintf(out, "  peak        %zu bytes\n", stats->peak_bytes);
  if (stats->limit_bytes)
    fprintf(out, "  limit       %zu bytes\n", stats->limit_bytes);
  else
    fprintf(out, "  limit       none\n");
  fprintf(out, "  allocations %" PRIu64 "\n", stats->allocations);
  fprintf(out, "  limit hits  %" PRIu64 "\n", stats->limit_hits);
  for (int type = 0; type < NSALLOC_LUA_TYPE_COUNT; type++)
    fprintf(out, "  %-11s %" PRIu64 " allocated, %" PRIu64 " bytes\n", nsalloc_lua_type_name(type),
            stats->by_type[type].count, stats->by_type[type].bytes);
}
