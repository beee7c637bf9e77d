/*
 * nsalloc_nif_funcs.c - the NIF functions every bundling library exports
 * (NSALLOC_NIF_FUNCS): statistics for operators and collection per scheduler.
 *
 * The copy caches memory per thread. Scheduler threads never exit, so memory
 * a scheduler's cache holds - pages whose blocks were freed by OTHER threads
 * after work moved - comes back only when that scheduler allocates in the same
 * size class again or runs nsalloc_collect. collect_all (nsalloc_nif.erl) runs
 * nsalloc_collect on every normal scheduler (bound processes) and, through
 * nsalloc_collect_dirty's rendezvous, on every dirty scheduler.
 */
#include "nsalloc_nif_internal.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define RENDEZVOUS_TIMEOUT_S 2

ERL_NIF_TERM nsalloc_nif_stats_map(ErlNifEnv *env, const nsalloc_stats_t *s) {
  static const char *const names[] = {
      "in_use_bytes",    "in_use_blocks",      "page_bytes", "peak_page_bytes",
      "committed_bytes", "reserved_bytes",     "segments",   "pages",
      "heaps",           "abandoned_segments", "os_maps",    "os_unmaps",
      "purges",          "foreign_pointers",   "forwarded",  "invalid_pointers",
      "source_bytes",    "source_segments"};
  const uint64_t numbers[] = {s->in_use_bytes,
                              s->in_use_blocks,
                              s->page_bytes,
                              s->peak_page_bytes,
                              s->committed_bytes,
                              s->reserved_bytes,
                              s->segments,
                              s->pages,
                              s->heaps,
                              s->abandoned_segments,
                              s->os_maps,
                              s->os_unmaps,
                              s->purges,
                              s->foreign_pointers,
                              s->forwarded,
                              s->invalid_pointers,
                              nsalloc_nif_beam_bytes(),
                              nsalloc_nif_beam_segments()};
  enum { NUMBERS = sizeof numbers / sizeof numbers[0] };
  _Static_assert(sizeof names / sizeof names[0] == NUMBERS, "one name per number");
  ERL_NIF_TERM keys[NUMBERS + 2], values[NUMBERS + 2], map;
  for (size_t i = 0; i < NUMBERS; i++) {
    keys[i] = enif_make_atom(env, names[i]);
    values[i] = enif_make_uint64(env, numbers[i]);
  }
  const char *prefix = nsalloc_prefix();
  size_t length = strlen(prefix);
  keys[NUMBERS] = enif_make_atom(env, "prefix");
  memcpy(enif_make_new_binary(env, length, &values[NUMBERS]), prefix, length);
  keys[NUMBERS + 1] = enif_make_atom(env, "source");
  values[NUMBERS + 1] = enif_make_atom(env, nsalloc_nif_beam_source_installed() ? "beam" : "mmap");
  enif_make_map_from_arrays(env, keys, values, NUMBERS + 2, &map);
  return map;
}

ERL_NIF_TERM nsalloc_nif_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  return nsalloc_nif_stats_map(env, &stats);
}

static bool get_force(ErlNifEnv *env, ERL_NIF_TERM term, bool *force) {
  *force = enif_is_identical(term, enif_make_atom(env, "true"));
  return *force || enif_is_identical(term, enif_make_atom(env, "false"));
}

ERL_NIF_TERM nsalloc_nif_collect(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  bool force;
  if (!get_force(env, argv[0], &force)) return enif_make_badarg(env);
  nsalloc_collect(force);
  return enif_make_atom(env, "ok");
}

/* Calls of one round meet here; each returns how many had arrived when it
 * left. A dirty scheduler runs one call at a time, so Count calls in progress
 * together are on Count distinct threads. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t arrived_cond;
  ErlNifUInt64 round;
  unsigned arrived;
} rendezvous = {.lock = PTHREAD_MUTEX_INITIALIZER, .arrived_cond = PTHREAD_COND_INITIALIZER};

static unsigned rendezvous_join(ErlNifUInt64 round, unsigned count) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += RENDEZVOUS_TIMEOUT_S;
  pthread_mutex_lock(&rendezvous.lock);
  if (rendezvous.round != round) {
    rendezvous.round = round;
    rendezvous.arrived = 0;
  }
  rendezvous.arrived++;
  pthread_cond_broadcast(&rendezvous.arrived_cond);
  while (rendezvous.round == round && rendezvous.arrived < count)
    if (pthread_cond_timedwait(&rendezvous.arrived_cond, &rendezvous.lock, &deadline) == ETIMEDOUT)
      break;
  unsigned seen = rendezvous.round == round ? rendezvous.arrived : 0;
  pthread_mutex_unlock(&rendezvous.lock);
  return seen;
}

ERL_NIF_TERM nsalloc_nif_collect_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  bool force;
  int flags, wanted, arity;
  const ERL_NIF_TERM *round_count;
  ErlNifUInt64 round;
  unsigned count;
  if (enif_is_identical(argv[1], enif_make_atom(env, "dirty_cpu"))) {
    flags = ERL_NIF_DIRTY_JOB_CPU_BOUND;
    wanted = ERL_NIF_THR_DIRTY_CPU_SCHEDULER;
  } else if (enif_is_identical(argv[1], enif_make_atom(env, "dirty_io"))) {
    flags = ERL_NIF_DIRTY_JOB_IO_BOUND;
    wanted = ERL_NIF_THR_DIRTY_IO_SCHEDULER;
  } else {
    return enif_make_badarg(env);
  }
  if (!get_force(env, argv[0], &force) || !enif_get_tuple(env, argv[2], &arity, &round_count) ||
      arity != 2 || !enif_get_uint64(env, round_count[0], &round) ||
      !enif_get_uint(env, round_count[1], &count))
    return enif_make_badarg(env);
  if (enif_thread_type() != wanted)
    return enif_schedule_nif(env, "nsalloc_collect_dirty", flags, nsalloc_nif_collect_dirty, argc,
                             argv);
  nsalloc_collect(force);
  unsigned joined = rendezvous_join(round, count);
  return enif_make_tuple2(env, enif_make_atom(env, "ok"), enif_make_uint(env, joined));
}
