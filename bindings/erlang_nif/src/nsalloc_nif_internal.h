/*
 * nsalloc_nif_internal.h - what the glue's source files share (all hidden:
 * each NIF library has its own glue, like its own copy).
 */
#ifndef NSALLOC_NIF_INTERNAL_H
#define NSALLOC_NIF_INTERNAL_H

#include "nsalloc_nif.h"

enum nsalloc_nif_source { NSALLOC_NIF_SOURCE_MMAP, NSALLOC_NIF_SOURCE_BEAM };

/* nsalloc_nif.c */
NSALLOC_NIF_API enum nsalloc_nif_source nsalloc_nif_active_source(void);

/* nsalloc_nif_beam_source.c: segments drawn from enif_alloc. */
NSALLOC_NIF_API const nsalloc_os_source_t *nsalloc_nif_beam_source(void);
NSALLOC_NIF_API size_t nsalloc_nif_beam_bytes(void);    /* enif_alloc'd, padding included */
NSALLOC_NIF_API size_t nsalloc_nif_beam_segments(void); /* segments currently drawn */
/* Give every segment still drawn back to the VM. Only once the copy has no
 * live block and will never run again (its library is being unloaded). */

/* nsalloc_nif_funcs.c: the copy's statistics (and the glue's) as a map. */
NSALLOC_NIF_API ERL_NIF_TERM nsalloc_nif_stats_map(ErlNifEnv *env, const nsalloc_stats_t *stats);

#endif /* NSALLOC_NIF_INTERNAL_H */
