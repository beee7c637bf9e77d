/*
 * other_copy.h - a second private copy (prefix o_) linked into a test
 * program, reached through plain wrappers so the test's own translation
 * units keep using the canonical names for their copy.
 */
#ifndef NSALLOC_OTHER_COPY_H
#define NSALLOC_OTHER_COPY_H

#include <stdbool.h>
#include <stddef.h>

void *other_malloc(size_t size);
void *other_aligned_alloc(size_t alignment, size_t size);
void *other_realloc(void *p, size_t size);
void other_free(void *p);
size_t other_usable_size(const void *p);
bool other_owns(const void *p);

#endif
