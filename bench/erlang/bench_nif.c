/*
 * bench_nif.c - NIF-level allocator throughput, one source built three ways
 * (all as module nsa_bench_nif; each VM of the benchmark loads one of them):
 *   BENCH_NSALLOC  a private nsalloc copy (with the glue)
 *   BENCH_ENIF     enif_alloc / enif_realloc / enif_free
 *   BENCH_LIBC     glibc malloc / realloc / free
 * Each call does `iterations` operations so the NIF call itself is amortised
 * (and stays well under a millisecond, as a NIF should).
 */
#if defined(BENCH_NSALLOC)
#include "nsalloc_nif.h"
#define bench_malloc  nsalloc_malloc
#define bench_realloc nsalloc_realloc
#define bench_free    nsalloc_free
#elif defined(BENCH_ENIF)
#include <erl_nif.h>
#define bench_malloc  enif_alloc
#define bench_realloc enif_realloc
#define bench_free    enif_free
#else
#include <erl_nif.h>
#include <stdlib.h>
#define bench_malloc  malloc
#define bench_realloc realloc
#define bench_free    free
#endif

#include <stdbool.h>
#include <stdint.h>

#define RING       64 /* live blocks per churn call */
#define GROW_STEPS 6  /* 48 -> 96 -> ... -> 3072 bytes */

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

static bool get_args(ErlNifEnv *env, const ERL_NIF_TERM argv[], unsigned *iterations,
                     uint64_t *seed) {
  ErlNifUInt64 s;
  if (!enif_get_uint(env, argv[0], iterations) || !enif_get_uint64(env, argv[1], &s)) return false;
  *seed = s | 1;
  return true;
}

/* churn(Iterations, Seed): replace a random one of RING live blocks with a
 * new block of 16..256 bytes, Iterations times. Returns a checksum. */
static ERL_NIF_TERM churn(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  unsigned iterations;
  uint64_t state, sum = 0;
  if (!get_args(env, argv, &iterations, &state)) return enif_make_badarg(env);
  uint64_t *ring[RING] = {0};
  for (unsigned i = 0; i < iterations; i++) {
    uint64_t r = next_random(&state);
    unsigned slot = (unsigned)(r % RING);
    if (ring[slot]) sum += ring[slot][0];
    bench_free(ring[slot]);
    ring[slot] = bench_malloc(16 + (r >> 32) % 241);
    if (!ring[slot]) return enif_raise_exception(env, enif_make_atom(env, "enomem"));
    ring[slot][0] = r;
  }
  for (unsigned i = 0; i < RING; i++)
    bench_free(ring[i]);
  return enif_make_uint64(env, sum);
}

/* realloc_grow(Iterations, Seed): a 48-byte vector grown by doubling through
 * GROW_STEPS reallocs, written at each size, then freed; Iterations times. */
static ERL_NIF_TERM realloc_grow(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  unsigned iterations;
  uint64_t state, sum = 0;
  if (!get_args(env, argv, &iterations, &state)) return enif_make_badarg(env);
  for (unsigned i = 0; i < iterations; i++) {
    size_t size = 48;
    uint64_t *vector = bench_malloc(size);
    for (int step = 0; vector && step < GROW_STEPS; step++) {
      vector[size / sizeof(uint64_t) - 1] = next_random(&state);
      uint64_t *grown = bench_realloc(vector, 2 * size);
      if (!grown) break;
      vector = grown;
      size *= 2;
      sum += vector[size / sizeof(uint64_t) / 2 - 1];
    }
    if (!vector) return enif_raise_exception(env, enif_make_atom(env, "enomem"));
    bench_free(vector);
  }
  return enif_make_uint64(env, sum);
}

static ErlNifFunc funcs[] = {
    {"churn", 2, churn, 0},
    {"realloc_grow", 2, realloc_grow, 0},
#if defined(BENCH_NSALLOC)
    NSALLOC_NIF_FUNCS,
#endif
};

static int load(ErlNifEnv *env, void **priv_data, ERL_NIF_TERM load_info) {
  (void)env;
  (void)priv_data;
  (void)load_info;
#if defined(BENCH_NSALLOC)
  return nsalloc_nif_load(env, load_info);
#else
  return 0;
#endif
}

ERL_NIF_INIT(nsa_bench_nif, funcs, load, NULL, NULL, NULL)
