/* copy_api.c - compiled once per copy; FUZZ_COPY names the table (copy_api.h). */
#include "copy_api.h"

const fuzz_copy FUZZ_COPY = {
    .prefix = NSALLOC_PREFIX_STRING,
    .malloc = nsalloc_malloc,
    .calloc = nsalloc_calloc,
    .realloc = nsalloc_realloc,
    .aligned_alloc = nsalloc_aligned_alloc,
    .usable_size = nsalloc_usable_size,
    .good_size = nsalloc_good_size,
    .free = nsalloc_free,
    .free_sized = nsalloc_free_sized,
    .owns = nsalloc_owns,
    .heap_new = nsalloc_heap_new,
    .heap_delete = nsalloc_heap_delete,
    .heap_destroy = nsalloc_heap_destroy,
    .heap_malloc = nsalloc_heap_malloc,
    .heap_free = nsalloc_heap_free,
    .collect = nsalloc_collect,
    .stats = nsalloc_stats,
    .set_foreign_policy = nsalloc_set_foreign_policy,
    .set_message_handler = nsalloc_set_message_handler,
};
