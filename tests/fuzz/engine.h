/*
 * engine.h - the differential fuzzer's engine. An input's bytes decode into a
 * sequence of allocator operations on two private copies of the core (fa_ and
 * fb_, foreign policy `report`): malloc, calloc, aligned_alloc, realloc,
 * usable_size, free, free_sized, first-class heaps, worker threads that
 * allocate, free other threads' blocks and exit, and invalid pointers aimed at
 * the places the core must reject (never-allocated block positions, a page's
 * partial tail block, interior pointers, stale pointers, glibc, stack and
 * static memory, the other copy's blocks). Every result is checked against a
 * shadow model (model.h); on the first discrepancy the engine prints it with
 * the operations that led there and aborts.
 */
#ifndef NSALLOC_FUZZ_ENGINE_H
#define NSALLOC_FUZZ_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/* Run one input. Deterministic: worker threads are joined within the input,
 * and it ends by freeing every block and collecting both copies. */
void engine_run(const uint8_t *data, size_t size);

/* Called once just before the engine aborts on a discrepancy. */
void engine_set_failure_hook(void (*hook)(void));

#endif
