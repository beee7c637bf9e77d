/*
 * nsalloc_nif.h - bundle a private nsalloc copy inside an Erlang NIF library.
 *
 * Every NIF library that bundles nsalloc compiles its own copy (a distinct
 * NSALLOC_PREFIX, or the same prefix in another .so: the copy's state lives in
 * the library's own static data and TLS, never in a process-wide slot). This
 * header is the glue between that copy and the BEAM's library lifecycle:
 *
 *   load      nsalloc_nif_load(): applies the options found under the key
 *             `nsalloc` of the load_info map (see below), before the copy's
 *             first allocation.
 *   upgrade   nsalloc_nif_upgrade(): a new module instance. A different .so
 *             file has its own copy (configured here); the same file shares
 *             its copy with the old instance, which keeps working.
 *   unload    nsalloc_nif_unload(): when the last module instance using this
 *             copy goes, the copy is collected and shut down (its thread-exit
 *             key is deleted, so nothing can call into the closed library).
 *             ERTS runs unload only once every resource whose type has a
 *             destructor is gone, so blocks owned by resources are freed by
 *             their own copy first.
 *
 * load_info options, e.g. erlang:load_nif(Path, #{nsalloc => #{source => beam}}):
 *   source         mmap (default): segments are mmap'd and purged by the core.
 *                  beam: segments come from enif_alloc, so they show in
 *                  erlang:memory(); never decommitted while the copy lives.
 *   segment_cache  empty segments kept for reuse (default 8; 0 under beam so
 *                  that erlang:memory() shrinks as soon as a segment empties).
 *   foreign_policy abort (the core's default) | report.
 *   notify         a pid that receives {nsalloc_unloaded, Prefix, Stats} when
 *                  the copy is shut down (Stats adds retained_bytes: memory
 *                  that stays allocated after the library is gone).
 *
 * Erlang side: include "nsalloc_nif.hrl" in the module (stubs for the
 * functions below and nsalloc_collect_all/1) and put NSALLOC_NIF_FUNCS in the
 * ErlNifFunc table.
 */
#ifndef NSALLOC_NIF_H
#define NSALLOC_NIF_H

#include <erl_nif.h>

#include "nsalloc.h"

#define NSALLOC_NIF_API __attribute__((visibility("hidden")))

/* Lifecycle: call from the library's load/upgrade/unload callbacks. load and
 * upgrade return 0, or non-zero (and the load fails) on a bad option or when
 * the copy cannot take the requested segment source any more. */
NSALLOC_NIF_API int nsalloc_nif_load(ErlNifEnv *env, ERL_NIF_TERM load_info);
NSALLOC_NIF_API int nsalloc_nif_upgrade(ErlNifEnv *env, ERL_NIF_TERM load_info);
NSALLOC_NIF_API void nsalloc_nif_unload(ErlNifEnv *env);

/* A resource type private to this loaded library file, named
 * "<name>@<address of the glue's static data in this file>" (e.g.
 * "vec@0x7f3a1c2d4e60"; the whole name is cut at 127 bytes) and opened with
 * create|takeover. Module instances that loaded the same file share its static
 * data, so a reload of that file (same copy) takes the type over; another file
 * loaded at the same time (another copy) has other static data and gets its
 * own type. Each resource is thus always destroyed by the code of the copy
 * whose blocks it holds. */
NSALLOC_NIF_API ErlNifResourceType *nsalloc_nif_open_resource_type(ErlNifEnv *env, const char *name,
                                                                   ErlNifResourceDtor *dtor);

/* NIF functions (see NSALLOC_NIF_FUNCS):
 *   nsalloc_stats() -> #{in_use_bytes, in_use_blocks, page_bytes, peak_page_bytes,
 *       committed_bytes, reserved_bytes, segments, pages, heaps, abandoned_segments,
 *       os_maps, os_unmaps, purges, foreign_pointers, forwarded, invalid_pointers,
 *       prefix, source, source_bytes, source_segments}
 *   nsalloc_collect(Force) -> ok: collect the CALLING scheduler thread's cache.
 *   nsalloc_collect_dirty(Force, dirty_cpu | dirty_io, {Round, Count}) -> {ok, Joined}:
 *       collect on a dirty scheduler, then wait (up to 2 s) until Count calls of
 *       the same Round are in progress, so Count calls cover Count distinct
 *       dirty threads. Used by nsalloc_nif:collect_all/3. */
NSALLOC_NIF_API ERL_NIF_TERM nsalloc_nif_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
NSALLOC_NIF_API ERL_NIF_TERM nsalloc_nif_collect(ErlNifEnv *env, int argc,
                                                 const ERL_NIF_TERM argv[]);
NSALLOC_NIF_API ERL_NIF_TERM nsalloc_nif_collect_dirty(ErlNifEnv *env, int argc,
                                                       const ERL_NIF_TERM argv[]);

#define NSALLOC_NIF_FUNCS                                                                          \
  {"nsalloc_stats", 0, nsalloc_nif_stats, 0}, {"nsalloc_collect", 1, nsalloc_nif_collect, 0}, {    \
    "nsalloc_collect_dirty", 3, nsalloc_nif_collect_dirty, 0                                       \
  }

#endif /* NSALLOC_NIF_H */
