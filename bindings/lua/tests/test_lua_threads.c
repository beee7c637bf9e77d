/*
 * test_lua_threads.c - many states on many threads at once, and one state
 * handed from thread to thread. Every state also drives two C modules that
 * bundle their own copies (LUA_MODULE_DIR), so the copies' thread caches,
 * remote frees and unloads run concurrently too.
 */
#include "nsalloc_lua.h"
#include "test_util.h"

#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <string.h>

/* Deterministic work returning a checksum; under a memory limit the big
 * pcall'ed loop fails and the state goes on. */
static const char workload[] =
    "local seed = ...\n"
    "local a, b = require 'hammer_a', require 'hammer_b'\n"
    "local t = {}\n"
    "for i = 1, 1500 do t[i] = {i, tostring(i * seed), {x = i}} end\n"
    "local s = {}\n"
    "for i = 1, #t, 7 do s[#s + 1] = t[i][2] end\n"
    "local length = #table.concat(s, ',')\n"
    "local co = coroutine.wrap(function() for i = 1, 50 do coroutine.yield(i) end end)\n"
    "local sum = 0\n"
    "for i = 1, 50 do sum = sum + co() end\n"
    "for i = 1, 100 do\n"
    "  local x = a.new(48, i); x:resize(96); assert(x:check())\n"
    "  local y = b.from(x:bytes(), i); y:resize(200); assert(y:check())\n"
    "end\n"
    "local big = pcall(function() local x = {} for i = 1, 1e6 do x[i] = ('m'):rep(64) .. i end "
    "end)\n"
    "collectgarbage()\n"
    "return length + sum + (big and 1 or 0)";

#define STATE_LIMIT (3 << 20)
#define THREADS     4
#define STATES_EACH 3
#define ROUNDS      2

static lua_State *new_state(nsalloc_lua_context_t *ctx) {
  lua_State *L = ctx ? nsalloc_lua_context_newstate(ctx)
                     : nsalloc_lua_newstate(&(nsalloc_lua_options_t){.memory_limit = STATE_LIMIT});
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushstring(L, LUA_MODULE_DIR "/?.so");
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  return L;
}

/* Runs the workload; returns its checksum, or -1 after printing the error. */
static lua_Integer run_workload(lua_State *L, int seed) {
  if (luaL_loadstring(L, workload) != LUA_OK) return -1;
  lua_pushinteger(L, seed);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    fprintf(stderr, "workload: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -1;
  }
  lua_Integer result = lua_tointeger(L, -1);
  lua_pop(L, 1);
  return result;
}

static lua_Integer expected[THREADS * STATES_EACH];

static void compute_expected(void) {
  for (int seed = 0; seed < THREADS * STATES_EACH; seed++) {
    lua_State *L = new_state(NULL);
    expected[seed] = run_workload(L, seed + 1);
    lua_close(L);
  }
}

static void *many_states(void *arg) {
  int first = (int)(intptr_t)arg * STATES_EACH;
  lua_State *states[STATES_EACH];
  intptr_t failures = 0;
  for (int i = 0; i < STATES_EACH; i++)
    states[i] = new_state(NULL);
  for (int round = 0; round < ROUNDS; round++)
    for (int i = 0; i < STATES_EACH; i++) /* interleave the states on this thread */
      failures += run_workload(states[i], first + i + 1) != expected[first + i];
  for (int i = 0; i < STATES_EACH; i++) {
    nsalloc_lua_stats_t stats;
    nsalloc_lua_context_stats(nsalloc_lua_context_of(states[i]), &stats);
    failures += stats.peak_bytes > STATE_LIMIT || stats.limit_hits == 0;
    lua_close(states[i]);
  }
  return (void *)failures;
}

static void test_many_states_on_many_threads(void) {
  compute_expected();
  for (int seed = 0; seed < THREADS * STATES_EACH; seed++)
    CHECK(expected[seed] > 0);
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    CHECK_EQ(pthread_create(&threads[t], NULL, many_states, (void *)(intptr_t)t), 0);
  for (int t = 0; t < THREADS; t++) {
    void *failures;
    pthread_join(threads[t], &failures);
    CHECK_EQ((intptr_t)failures, 0);
  }
}

/* One state, three threads in turn (each join hands it over). */
typedef struct handover_s {
  nsalloc_lua_context_t *ctx;
  lua_State *L;
  int step;
  bool ok;
} handover_t;

static const char *const steps[] = {
    "local a = require 'hammer_a'\n"
    "kept = {}\n"
    "for i = 1, 3000 do kept[i] = ('v'):rep(i % 50) .. i end\n"
    "buffers = {}\n"
    "for i = 1, 50 do buffers[i] = a.new(48, i) end",
    /* a second thread frees, resizes and checks what the first made */
    "for i = 1, 3000, 2 do kept[i] = nil end\n"
    "collectgarbage()\n"
    "for i = 1, 50 do buffers[i]:resize(96 + i); assert(buffers[i]:check()) end\n"
    "for i = 2, 3000, 2 do assert(kept[i] == ('v'):rep(i % 50) .. i) end",
    "buffers = nil; kept = nil; collectgarbage()",
};

static void *run_step(void *arg) {
  handover_t *handover = arg;
  handover->ok = luaL_dostring(handover->L, steps[handover->step]) == LUA_OK;
  if (!handover->ok)
    fprintf(stderr, "step %d: %s\n", handover->step, lua_tostring(handover->L, -1));
  nsalloc_lua_stats_t stats; /* from the thread using the state */
  nsalloc_lua_context_stats(handover->ctx, &stats);
  handover->ok &= stats.heap_bytes >= stats.in_use_bytes && stats.in_use_bytes > 0;
  if (handover->step == 2) lua_close(handover->L);
  return NULL;
}

/* After lua_close: nothing left in the context's count or heap. */
static void delete_closed_context(nsalloc_lua_context_t *ctx) {
  nsalloc_lua_stats_t stats;
  nsalloc_lua_context_stats(ctx, &stats);
  CHECK_EQ(stats.in_use_bytes, 0);
  CHECK_EQ(stats.heap_bytes, 0);
  nsalloc_lua_context_delete(ctx);
}

static void test_state_moves_between_threads(void) {
  handover_t handover = {.ctx = nsalloc_lua_context_new(NULL)};
  handover.L = new_state(handover.ctx);
  for (handover.step = 0; handover.step < (int)TEST_COUNT(steps); handover.step++) {
    pthread_t thread;
    CHECK_EQ(pthread_create(&thread, NULL, run_step, &handover), 0);
    pthread_join(thread, NULL);
    CHECK(handover.ok);
  }
  delete_closed_context(handover.ctx);
}

/* A state created on a thread that then exits, and closed (on another
 * thread) after a second state lived and died on a third thread: the first
 * state's heap outlives its thread, and its close must not touch what the
 * second state's heap left behind. */
static void *create_and_run(void *arg) {
  handover_t *handover = arg;
  handover->ctx = nsalloc_lua_context_new(&(nsalloc_lua_options_t){.memory_limit = STATE_LIMIT});
  handover->L = new_state(handover->ctx);
  handover->ok = run_workload(handover->L, 1) == expected[0];
  return NULL;
}

static void *live_and_die(void *arg) {
  (void)arg;
  lua_State *L = new_state(NULL);
  intptr_t failed = run_workload(L, 2) != expected[1];
  lua_close(L);
  return (void *)failed;
}

static void test_state_outlives_its_thread(void) {
  compute_expected();
  for (int round = 0; round < 3; round++) {
    handover_t first = {0};
    pthread_t thread;
    CHECK_EQ(pthread_create(&thread, NULL, create_and_run, &first), 0);
    pthread_join(thread, NULL);
    CHECK(first.ok);
    void *failed;
    CHECK_EQ(pthread_create(&thread, NULL, live_and_die, NULL), 0);
    pthread_join(thread, &failed);
    CHECK_EQ((intptr_t)failed, 0);
    CHECK_EQ(run_workload(first.L, 3), expected[2]); /* this thread takes the state over */
    lua_close(first.L);
    delete_closed_context(first.ctx);
  }
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_many_states_on_many_threads),
      TEST(test_state_moves_between_threads),
      TEST(test_state_outlives_its_thread),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
