/*
 * nsalloc_example_nif.c - the smallest NIF library bundling a private nsalloc
 * copy: join/1 concatenates binaries in a buffer grown with nsalloc_realloc.
 */
#include "nsalloc_nif.h"

#include <string.h>

static ERL_NIF_TERM enomem(ErlNifEnv *env) {
  return enif_raise_exception(env, enif_make_atom(env, "enomem"));
}

/* join([binary()]) -> binary() */
static ERL_NIF_TERM join(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  size_t length = 0, capacity = 48;
  unsigned char *buffer = nsalloc_malloc(capacity);
  if (!buffer) return enomem(env);
  ERL_NIF_TERM list = argv[0], head, result;
  ErlNifBinary part;
  while (enif_get_list_cell(env, list, &head, &list)) {
    if (!enif_inspect_binary(env, head, &part)) {
      nsalloc_free(buffer);
      return enif_make_badarg(env);
    }
    if (length + part.size > capacity) {
      while (length + part.size > capacity)
        capacity *= 2;
      unsigned char *grown = nsalloc_realloc(buffer, capacity);
      if (!grown) {
        nsalloc_free(buffer);
        return enomem(env);
      }
      buffer = grown;
    }
    memcpy(buffer + length, part.data, part.size);
    length += part.size;
  }
  memcpy(enif_make_new_binary(env, length, &result), buffer, length);
  nsalloc_free(buffer);
  return result;
}

static ErlNifFunc funcs[] = {{"join", 1, join, 0}, NSALLOC_NIF_FUNCS};

static int load(ErlNifEnv *env, void **priv_data, ERL_NIF_TERM load_info) {
  (void)priv_data;
  return nsalloc_nif_load(env, load_info);
}

static int upgrade(ErlNifEnv *env, void **priv_data, void **old_priv_data, ERL_NIF_TERM load_info) {
  (void)priv_data;
  (void)old_priv_data;
  return nsalloc_nif_upgrade(env, load_info);
}

static void unload(ErlNifEnv *env, void *priv_data) {
  (void)priv_data;
  nsalloc_nif_unload(env);
}

ERL_NIF_INIT(nsalloc_example, funcs, load, NULL, upgrade, unload)
