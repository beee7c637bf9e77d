/*
 * nsalloc_nif_internal.h - what the glue's source files share (all hidden:
 * each NIF library has its own glue, like its own copy).
 */
#ifndef NSALLOC_NIF_INTERNAL_H
#define NSALLOC_NIF_INTERNAL_H

#include "nsalloc_nif.h"

/* The files depend on each other in one direction only:
 * nsalloc_nif.c -> nsalloc_nif_funcs.c -> nsalloc_nif_beam_source.c. */

/* nsalloc_nif_beam_source.c: segments drawn from enif_alloc. Installing
 * succeeds only before the copy's first allocation (0, or the core's error);
 * call it under the glue's lock. */
NSALLOC_NIF_API int nsalloc_nif_beam_source_install(void);
NSALLOC_NIF_API bool nsalloc_nif_beam_source_installed(void);
NSALLOC_NIF_API size_t nsalloc_nif_beam_bytes(void);    /* enif_alloc'd, padding included */
NSALLOC_NIF_API size_t nsalloc_nif_beam_segments(void); /* segments currently drawn */

/* nsalloc_nif_funcs.c: the copy's statistics (and the glue's) as a map. */
NSALLOC_NIF_API ERL_NIF_TERM nsalloc_nif_stats_map(ErlNifEnv *env, const nsalloc_stats_t *stats);

#endif /* NSALLOC_NIF_INTERNAL_H */
