/*
 * nsa_test_nif.c - the NIF every test library is built from (one source, many
 * .so files: NSA_MODULE names the Erlang module, the build picks the copy).
 *
 * It does what the incident's NIF did: grow small vectors with realloc (48 ->
 * 96 bytes and on) and hand the grown arrays to enif_make_map_from_arrays.
 * Unlike that NIF it checks every word against its source before building a
 * map, and answers {mismatch, N} instead of handing garbage to the VM, so a
 * broken allocator is counted rather than crashing the node.
 *
 * Every function takes, as its last argument, where to run: normal, dirty_cpu
 * or dirty_io; a call that arrives elsewhere reschedules itself there.
 */
#include "nsalloc_nif.h"

#include <string.h>

#define FIRST_TERMS 6 /* 6 terms = 48 bytes, doubled by realloc: the incident's shape */

typedef ERL_NIF_TERM nif_fn(ErlNifEnv *, int, const ERL_NIF_TERM[]);

/* One vector element: 24 bytes, so capacity 2 -> 4 is a 48 -> 96 byte realloc. */
typedef struct pair_s {
  ErlNifSInt64 key, value;
  ErlNifUInt64 check;
} pair_t;

/* A vector resource. Used by one process at a time (the tests hand it over). */
typedef struct vec_s {
  pair_t *pairs;
  size_t count, capacity;
} vec_t;

/* A resource holding `count` blocks, for memory accounting tests. */
typedef struct hold_s {
  void **blocks;
  size_t count;
} hold_t;

static ErlNifResourceType *vec_type, *hold_type;

static ERL_NIF_TERM atom(ErlNifEnv *env, const char *name) {
  return enif_make_atom(env, name);
}

static ERL_NIF_TERM raise(ErlNifEnv *env, const char *reason) {
  return enif_raise_exception(env, atom(env, reason));
}

/* Hands the call over when the caller asked for another kind of scheduler.
 * Returns true with *result set when it did (or when `where` is bad). */
static bool elsewhere(ErlNifEnv *env, const char *name, nif_fn *fn, int argc,
                      const ERL_NIF_TERM argv[], ERL_NIF_TERM *result) {
  static const struct {
    const char *name;
    int thread_type, flags;
  } kinds[] = {{"normal", ERL_NIF_THR_NORMAL_SCHEDULER, 0},
               {"dirty_cpu", ERL_NIF_THR_DIRTY_CPU_SCHEDULER, ERL_NIF_DIRTY_JOB_CPU_BOUND},
               {"dirty_io", ERL_NIF_THR_DIRTY_IO_SCHEDULER, ERL_NIF_DIRTY_JOB_IO_BOUND}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    if (!enif_is_identical(argv[argc - 1], atom(env, kinds[i].name))) continue;
    if (enif_thread_type() == kinds[i].thread_type) return false;
    *result = enif_schedule_nif(env, name, kinds[i].flags, fn, argc, argv);
    return true;
  }
  *result = enif_make_badarg(env);
  return true;
}

/* Doubles a term array's capacity; false (array untouched) when out of memory. */
static bool grow_terms(ERL_NIF_TERM **terms, size_t *capacity) {
  ERL_NIF_TERM *grown = nsalloc_realloc(*terms, 2 * *capacity * sizeof(ERL_NIF_TERM));
  if (!grown) return false;
  *terms = grown;
  *capacity *= 2;
  return true;
}

/* Map keys and values collected into realloc-grown arrays. */
typedef struct term_arrays_s {
  ERL_NIF_TERM *keys, *values;
  size_t count, capacity;
} term_arrays_t;

static bool arrays_init(term_arrays_t *a) {
  a->count = 0;
  a->capacity = FIRST_TERMS;
  a->keys = nsalloc_malloc(FIRST_TERMS * sizeof(ERL_NIF_TERM));
  a->values = nsalloc_malloc(FIRST_TERMS * sizeof(ERL_NIF_TERM));
  return a->keys && a->values;
}

static bool arrays_push(term_arrays_t *a, ERL_NIF_TERM key, ERL_NIF_TERM value) {
  if (a->count == a->capacity) {
    size_t values_capacity = a->capacity;
    if (!grow_terms(&a->keys, &a->capacity) || !grow_terms(&a->values, &values_capacity))
      return false;
  }
  a->keys[a->count] = key;
  a->values[a->count] = value;
  a->count++;
  return true;
}

static void arrays_free(term_arrays_t *a) {
  nsalloc_free(a->keys);
  nsalloc_free(a->values);
}

/* The map, or {mismatch, N} when N pairs failed their check. */
static ERL_NIF_TERM arrays_to_map(ErlNifEnv *env, term_arrays_t *a, size_t mismatches) {
  ERL_NIF_TERM result;
  if (mismatches)
    result = enif_make_tuple2(env, atom(env, "mismatch"), enif_make_uint64(env, mismatches));
  else if (!enif_make_map_from_arrays(env, a->keys, a->values, a->count, &result))
    result = enif_make_badarg(env); /* duplicate keys: the caller's mistake */
  arrays_free(a);
  return result;
}

/* map_from_pairs([{K, V}], Where): the pairs' terms go through the grown
 * arrays; each word is compared with the list before the map is built. */
static ERL_NIF_TERM map_from_pairs(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM result, list = argv[0], head;
  if (elsewhere(env, "map_from_pairs", map_from_pairs, argc, argv, &result)) return result;
  term_arrays_t a;
  if (!arrays_init(&a)) {
    arrays_free(&a);
    return raise(env, "enomem");
  }
  while (enif_get_list_cell(env, list, &head, &list)) {
    const ERL_NIF_TERM *pair;
    int arity;
    if (!enif_get_tuple(env, head, &arity, &pair) || arity != 2) {
      arrays_free(&a);
      return enif_make_badarg(env);
    }
    if (!arrays_push(&a, pair[0], pair[1])) {
      arrays_free(&a);
      return raise(env, "enomem");
    }
  }
  size_t mismatches = 0, i = 0;
  for (list = argv[0]; enif_get_list_cell(env, list, &head, &list); i++) {
    const ERL_NIF_TERM *pair;
    int arity;
    enif_get_tuple(env, head, &arity, &pair);
    mismatches += a.keys[i] != pair[0] || a.values[i] != pair[1];
  }
  return arrays_to_map(env, &a, mismatches);
}

static ErlNifUInt64 pair_check(ErlNifSInt64 key, ErlNifSInt64 value, size_t index) {
  return ((ErlNifUInt64)key * 0x9e3779b97f4a7c15u) ^ (ErlNifUInt64)value ^ (index << 17) ^
         0x5bd1e995u;
}

static void vec_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nsalloc_free(((vec_t *)obj)->pairs);
}

static ERL_NIF_TERM vec_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM result;
  if (elsewhere(env, "vec_new", vec_new, argc, argv, &result)) return result;
  vec_t *vec = enif_alloc_resource(vec_type, sizeof(vec_t));
  vec->count = 0;
  vec->capacity = 2;
  vec->pairs = nsalloc_malloc(vec->capacity * sizeof(pair_t));
  if (!vec->pairs) vec->capacity = 0;
  result = enif_make_resource(env, vec);
  enif_release_resource(vec);
  return vec->pairs ? result : raise(env, "enomem");
}

/* vec_push(Vec, Key, Value, Where) */
static ERL_NIF_TERM vec_push(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM result;
  if (elsewhere(env, "vec_push", vec_push, argc, argv, &result)) return result;
  vec_t *vec;
  ErlNifSInt64 key, value;
  if (!enif_get_resource(env, argv[0], vec_type, (void **)&vec) ||
      !enif_get_int64(env, argv[1], &key) || !enif_get_int64(env, argv[2], &value))
    return enif_make_badarg(env);
  if (vec->count == vec->capacity) {
    size_t capacity = vec->capacity ? 2 * vec->capacity : 2;
    pair_t *grown = nsalloc_realloc(vec->pairs, capacity * sizeof(pair_t));
    if (!grown) return raise(env, "enomem");
    vec->pairs = grown;
    vec->capacity = capacity;
  }
  vec->pairs[vec->count] = (pair_t){key, value, pair_check(key, value, vec->count)};
  vec->count++;
  return atom(env, "ok");
}

/* vec_to_map(Vec, Where): #{Key => Value}, or {mismatch, N}. */
static ERL_NIF_TERM vec_to_map(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM result;
  if (elsewhere(env, "vec_to_map", vec_to_map, argc, argv, &result)) return result;
  vec_t *vec;
  if (!enif_get_resource(env, argv[0], vec_type, (void **)&vec)) return enif_make_badarg(env);
  term_arrays_t a;
  size_t mismatches = 0;
  bool ok = arrays_init(&a);
  for (size_t i = 0; ok && i < vec->count; i++) {
    const pair_t *p = &vec->pairs[i];
    if (p->check != pair_check(p->key, p->value, i))
      mismatches++;
    else
      ok = arrays_push(&a, enif_make_int64(env, p->key), enif_make_int64(env, p->value));
  }
  if (!ok) {
    arrays_free(&a);
    return raise(env, "enomem");
  }
  /* The term arrays grew by realloc too: check them word by word against the
   * pairs (the tests' keys and values are small integers, immediate terms, so
   * equal values make equal words). */
  for (size_t i = 0, j = 0; i < vec->count; i++) {
    const pair_t *p = &vec->pairs[i];
    if (p->check != pair_check(p->key, p->value, i)) continue;
    mismatches +=
        a.keys[j] != enif_make_int64(env, p->key) || a.values[j] != enif_make_int64(env, p->value);
    j++;
  }
  return arrays_to_map(env, &a, mismatches);
}

/* vec_free(Vec, Where): free the pairs now, on this scheduler. */
static ERL_NIF_TERM vec_free(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM result;
  if (elsewhere(env, "vec_free", vec_free, argc, argv, &result)) return result;
  vec_t *vec;
  if (!enif_get_resource(env, argv[0], vec_type, (void **)&vec)) return enif_make_badarg(env);
  nsalloc_free(vec->pairs);
  *vec = (vec_t){0};
  return atom(env, "ok");
}

static void hold_release(hold_t *hold) {
  for (size_t i = 0; i < hold->count; i++)
    nsalloc_free(hold->blocks[i]);
  nsalloc_free(hold->blocks);
  *hold = (hold_t){0};
}

static void hold_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  hold_release(obj);
}

/* hold(Count, Size, Where): a resource holding Count written blocks of Size. */
static ERL_NIF_TERM hold(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM result;
  if (elsewhere(env, "hold", hold, argc, argv, &result)) return result;
  size_t count, size;
  if (!enif_get_uint64(env, argv[0], &count) || !enif_get_uint64(env, argv[1], &size))
    return enif_make_badarg(env);
  hold_t *held = enif_alloc_resource(hold_type, sizeof(hold_t));
  *held = (hold_t){nsalloc_calloc(count, sizeof(void *)), 0};
  while (held->blocks && held->count < count) {
    void *block = nsalloc_malloc(size);
    if (!block) break;
    memset(block, 0xa5, size);
    held->blocks[held->count++] = block;
  }
  bool complete = held->blocks && held->count == count;
  if (!complete) hold_release(held);
  result = enif_make_resource(env, held);
  enif_release_resource(held);
  return complete ? result : raise(env, "enomem");
}

/* release(Hold, Where): free the held blocks now, on this scheduler. */
static ERL_NIF_TERM release(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM result;
  if (elsewhere(env, "release", release, argc, argv, &result)) return result;
  hold_t *held;
  if (!enif_get_resource(env, argv[0], hold_type, (void **)&held)) return enif_make_badarg(env);
  hold_release(held);
  return atom(env, "ok");
}

static ErlNifFunc funcs[] = {
    {"map_from_pairs", 2, map_from_pairs, 0},
    {"vec_new", 1, vec_new, 0},
    {"vec_push", 4, vec_push, 0},
    {"vec_to_map", 2, vec_to_map, 0},
    {"vec_free", 2, vec_free, 0},
    {"hold", 3, hold, 0},
    {"release", 2, release, 0},
    NSALLOC_NIF_FUNCS,
};

/* Resource types first: a failed load rolls them back, while the glue's
 * instance count must only move for a load that succeeds. */
static int open_types(ErlNifEnv *env) {
  vec_type = nsalloc_nif_open_resource_type(env, "vec", vec_dtor);
  hold_type = nsalloc_nif_open_resource_type(env, "hold", hold_dtor);
  return !vec_type || !hold_type;
}

static int load(ErlNifEnv *env, void **priv_data, ERL_NIF_TERM load_info) {
  (void)priv_data;
  return open_types(env) || nsalloc_nif_load(env, load_info);
}

static int upgrade(ErlNifEnv *env, void **priv_data, void **old_priv_data, ERL_NIF_TERM load_info) {
  (void)priv_data;
  (void)old_priv_data;
  return open_types(env) || nsalloc_nif_upgrade(env, load_info);
}

static void unload(ErlNifEnv *env, void *priv_data) {
  (void)priv_data;
  nsalloc_nif_unload(env);
}

/* ERL_NIF_INIT stringifies its first argument: expand NSA_MODULE first. */
#define NIF_INIT(module) ERL_NIF_INIT(module, funcs, load, NULL, upgrade, unload)
NIF_INIT(NSA_MODULE)
