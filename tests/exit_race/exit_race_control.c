/*
 * exit_race_control.c - the control module of test_exit_race: a pthread key
 * whose destructor works on module state, as an allocator's thread exit does,
 * and a module destructor that counts the exits it finds inside that work.
 * It then waits for them (so the control itself cannot crash): it shows the
 * harness makes exits overlap the unload, not what an ungated copy does then.
 */
#include <pthread.h>
#include <stdatomic.h>

static pthread_key_t key;
static atomic_int exits_inside;
static atomic_long *_Atomic overlaps; /* in the test program: outlives this module */

static void exit_work(void *value) {
  (void)value;
  atomic_fetch_add(&exits_inside, 1);
  for (volatile int i = 0; i < 200000; i++) /* tens of microseconds: an exit abandoning a heap */
    ;
  atomic_fetch_sub(&exits_inside, 1);
}

__attribute__((constructor)) static void control_load(void) {
  pthread_key_create(&key, exit_work);
}

__attribute__((destructor)) static void control_unload(void) {
  pthread_key_delete(key);
  if (atomic_load(&exits_inside) != 0) atomic_fetch_add(atomic_load(&overlaps), 1);
  while (atomic_load(&exits_inside) != 0)
    ;
}

/* The thread now has key data: its exit runs exit_work. */
__attribute__((visibility("default"))) void exit_race_control_use(atomic_long *counter) {
  atomic_store(&overlaps, counter);
  pthread_setspecific(key, &key);
}
