/*
 * nsalloc_nif.c - the copy's life inside a NIF library: options from
 * load_info, load/upgrade/unload bookkeeping, shutdown, private resource types.
 *
 * One .so file = one copy: its static data (this glue state and the copy's
 * state) is shared by every module instance that loaded the same file, and by
 * nothing else. `instances` counts those module instances; the copy is shut
 * down when the last one is unloaded.
 */
#include "nsalloc_nif_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

enum segment_source { SOURCE_MMAP, SOURCE_BEAM };

typedef struct options_s {
  int source;         /* enum segment_source, or -1: not given */
  long segment_cache; /* -1: not given */
  int foreign_policy; /* nsalloc_policy_t, or -1: not given */
  bool has_notify;
  ErlNifPid notify;
} options_t;

static struct {
  pthread_mutex_t lock; /* serialises load/upgrade/unload (unload may run from a GC) */
  unsigned instances;   /* module instances using this copy */
  bool configured;      /* the segment source is fixed */
  bool has_notify;
  ErlNifPid notify;
} glue = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *const source_names[] = {[SOURCE_MMAP] = "mmap", [SOURCE_BEAM] = "beam"};

static bool is_atom(ErlNifEnv *env, ERL_NIF_TERM term, const char *name) {
  return enif_is_identical(term, enif_make_atom(env, name));
}

/* Why a load failed, as the copy's diagnostic line (stderr unless a message
 * handler is set, naming the copy's prefix and library file): the only
 * channel a NIF has, since ERTS reports a failed load callback as "Library
 * load-call unsuccessful (N)". Every path that fails a load prints one. */
static void load_failed(const char *format, ...) {
  char text[768]; /* terms (%T) are formatted by ERTS, the line by the copy */
  va_list args;
  va_start(args, format);
  enif_vsnprintf(text, sizeof text, format, args);
  va_end(args);
  nsalloc_message("nif: %s", text);
}

/* One entry of the `nsalloc` map; NULL, or what the value should have been. */
static const char *option_parse(ErlNifEnv *env, ERL_NIF_TERM key, ERL_NIF_TERM value,
                                options_t *out) {
  if (is_atom(env, key, "source")) {
    if (is_atom(env, value, "mmap"))
      out->source = SOURCE_MMAP;
    else if (is_atom(env, value, "beam"))
      out->source = SOURCE_BEAM;
    else
      return "expected mmap or beam";
  } else if (is_atom(env, key, "segment_cache")) {
    /* The core's own range, checked here so that the message can name it. */
    if (!enif_get_long(env, value, &out->segment_cache) || out->segment_cache < 0 ||
        out->segment_cache > NSALLOC_SEGMENT_CACHE_MAX)
      return "expected an integer in 0.." NSALLOC_STRINGIFY(NSALLOC_SEGMENT_CACHE_MAX);
  } else if (is_atom(env, key, "foreign_policy")) {
    if (is_atom(env, value, "abort"))
      out->foreign_policy = NSALLOC_POLICY_ABORT;
    else if (is_atom(env, value, "report"))
      out->foreign_policy = NSALLOC_POLICY_REPORT;
    else
      return "expected abort or report";
  } else if (is_atom(env, key, "notify")) {
    if (!enif_get_local_pid(env, value, &out->notify)) return "expected a local pid";
    out->has_notify = true;
  } else {
    return "unknown key (known: source, segment_cache, foreign_policy, notify)";
  }
  return NULL;
}

/* The value of the key `nsalloc` in load_info, a map or a proplist (the
 * first {nsalloc, Value}, or a bare `nsalloc` meaning true, as
 * proplists:get_value/2 reads it); false when there is none. */
static bool nsalloc_entry(ErlNifEnv *env, ERL_NIF_TERM load_info, ERL_NIF_TERM nsalloc,
                          ERL_NIF_TERM *value) {
  if (enif_is_map(env, load_info)) return enif_get_map_value(env, load_info, nsalloc, value);
  ERL_NIF_TERM head, tail = load_info;
  const ERL_NIF_TERM *pair;
  int arity;
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    if (enif_is_identical(head, nsalloc)) {
      *value = enif_make_atom(env, "true");
      return true;
    }
    if (enif_get_tuple(env, head, &arity, &pair) && arity == 2 &&
        enif_is_identical(pair[0], nsalloc)) {
      *value = pair[1];
      return true;
    }
  }
  return false;
}

/* Reads the options map under the key `nsalloc` of load_info; false on
 * anything unexpected (unknown key or bad value), so typos fail the load, and
 * the failure names the key and the value. */
static bool options_parse(ErlNifEnv *env, ERL_NIF_TERM load_info, options_t *out) {
  *out = (options_t){.source = -1, .segment_cache = -1, .foreign_policy = -1};
  ERL_NIF_TERM nsalloc = enif_make_atom(env, "nsalloc"), map, key, value;
  if (!nsalloc_entry(env, load_info, nsalloc, &map)) return true;
  ErlNifMapIterator entries;
  if (!enif_map_iterator_create(env, map, &entries, ERL_NIF_MAP_ITERATOR_FIRST)) {
    load_failed("bad load_info option %T => %T: expected a map", nsalloc, map);
    return false;
  }
  const char *expected = NULL;
  for (; !expected && enif_map_iterator_get_pair(env, &entries, &key, &value);
       enif_map_iterator_next(env, &entries))
    expected = option_parse(env, key, value, out);
  enif_map_iterator_destroy(env, &entries);
  if (expected) load_failed("bad load_info option %T => %T: %s", key, value, expected);
  return !expected;
}

/* Apply options; lock held. The segment source is chosen once per copy (the
 * core takes it only before its first allocation); the rest may change. The
 * values were checked against the core's ranges, so the core refusing one
 * is a glue bug, still reported. */
static int configure(const options_t *opt) {
  if (!glue.configured) {
    if (opt->source == SOURCE_BEAM && nsalloc_nif_beam_source_install()) {
      load_failed("source => beam: refused, the copy has allocated already (call nsalloc_nif_load "
                  "before the library's load code allocates)");
      return 1;
    }
    glue.configured = true;
  }
  enum segment_source source = nsalloc_nif_beam_source_installed() ? SOURCE_BEAM : SOURCE_MMAP;
  if (opt->source >= 0 && (enum segment_source)opt->source != source) {
    load_failed("source => %s: this library file's copy already runs with source => %s (the "
                "source is chosen by the first load of a file)",
                source_names[opt->source], source_names[source]);
    return 1;
  }
  /* Under beam, cached empty segments would stay counted in erlang:memory(). */
  long cache = opt->segment_cache >= 0 ? opt->segment_cache : source == SOURCE_BEAM ? 0 : -1;
  if (cache >= 0 && nsalloc_option_set(NSALLOC_OPTION_SEGMENT_CACHE, cache)) {
    load_failed("segment_cache => %ld: refused by the copy", cache);
    return 1;
  }
  if (opt->foreign_policy >= 0 &&
      nsalloc_set_foreign_policy((nsalloc_policy_t)opt->foreign_policy, NULL)) {
    load_failed("foreign_policy => %d: refused by the copy", opt->foreign_policy);
    return 1;
  }
  if (opt->has_notify) {
    glue.notify = opt->notify;
    glue.has_notify = true;
  }
  return 0;
}

static int attach(ErlNifEnv *env, ERL_NIF_TERM load_info) {
  options_t opt;
  if (!options_parse(env, load_info, &opt)) return 1;
  pthread_mutex_lock(&glue.lock);
  int error = configure(&opt);
  if (!error) glue.instances++;
  pthread_mutex_unlock(&glue.lock);
  return error;
}

int nsalloc_nif_load(ErlNifEnv *env, ERL_NIF_TERM load_info) {
  return attach(env, load_info);
}

int nsalloc_nif_upgrade(ErlNifEnv *env, ERL_NIF_TERM load_info) {
  return attach(env, load_info);
}

static void notify_unloaded(ErlNifEnv *env, const nsalloc_stats_t *stats, size_t retained) {
  ErlNifEnv *msg_env = enif_alloc_env();
  ERL_NIF_TERM map = nsalloc_nif_stats_map(msg_env, stats), prefix;
  enif_make_map_put(msg_env, map, enif_make_atom(msg_env, "retained_bytes"),
                    enif_make_uint64(msg_env, retained), &map);
  enif_get_map_value(msg_env, map, enif_make_atom(msg_env, "prefix"), &prefix);
  ERL_NIF_TERM message =
      enif_make_tuple3(msg_env, enif_make_atom(msg_env, "nsalloc_unloaded"), prefix, map);
  enif_send(env, &glue.notify, msg_env, message);
  enif_free_env(msg_env);
}

/* The last instance is going and the library will be closed: no scheduler
 * will allocate from the copy again, so nsalloc_unload() deletes its
 * thread-exit key and gives back every segment without a live block, in any
 * scheduler's heap. Segments holding blocks of live resources stay (their
 * destructors run later and free into them); they are reported as retained. */
void nsalloc_nif_unload(ErlNifEnv *env) {
  pthread_mutex_lock(&glue.lock);
  if (--glue.instances == 0) {
    nsalloc_collect(true);
    nsalloc_unload();
    nsalloc_stats_t stats;
    nsalloc_stats(&stats);
    size_t retained =
        nsalloc_nif_beam_source_installed() ? nsalloc_nif_beam_bytes() : stats.reserved_bytes;
    if (retained)
      nsalloc_message("nif: unloaded with %zu live blocks; %zu bytes stay allocated",
                      stats.in_use_blocks, retained);
    if (glue.has_notify) notify_unloaded(env, &stats, retained);
  }
  pthread_mutex_unlock(&glue.lock);
}

ErlNifResourceType *nsalloc_nif_open_resource_type(ErlNifEnv *env, const char *name,
                                                   ErlNifResourceDtor *dtor) {
  /* The address of this library's static data identifies its copy: equal for
   * two instances of one loaded file, different for any other file. */
  char full[128];
  snprintf(full, sizeof full, "%s@%p", name, (void *)&glue);
  ErlNifResourceFlags tried;
  return enif_open_resource_type(env, NULL, full, dtor, ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER,
                                 &tried);
}
