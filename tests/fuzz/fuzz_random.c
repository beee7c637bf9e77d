/*
 * fuzz_random.c - the differential fuzzer without libFuzzer (any compiler):
 *
 *   fuzz_random [--seconds N] [--seed S]   random inputs from a seeded PRNG
 *                                          for N seconds (default 60)
 *   fuzz_random FILE|DIR...                replay inputs (a corpus)
 *
 * A random input that finds a discrepancy is written to
 * fuzz-crash-<seed>-<iteration> before the engine aborts.
 */
#include "engine.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define INPUT_MAX 4096

static uint8_t input[INPUT_MAX];
static size_t input_size;
static char crash_name[64];

static void save_input(void) {
  FILE *f = fopen(crash_name, "wb");
  if (f && fwrite(input, 1, input_size, f) == input_size)
    fprintf(stderr, "fuzz_random: input saved as %s\n", crash_name);
  if (f) fclose(f);
}

static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_random(double seconds, uint64_t seed) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  double start = now_seconds();
  unsigned long iterations = 0;
  engine_set_failure_hook(save_input);
  printf("fuzz_random: seed %llu, %.0f s\n", (unsigned long long)seed, seconds);
  fflush(stdout);
  while (now_seconds() - start < seconds) {
    /* Mostly short inputs (fast, and short sequences reach the interesting
     * states often), now and then a long one. */
    size_t limit = next_random(&state) % 8 == 0 ? INPUT_MAX : 256;
    input_size = 1 + next_random(&state) % limit;
    for (size_t i = 0; i < input_size; i++)
      input[i] = (uint8_t)next_random(&state);
    snprintf(crash_name, sizeof crash_name, "fuzz-crash-%llu-%lu", (unsigned long long)seed,
             iterations);
    engine_run(input, input_size);
    iterations++;
  }
  printf("fuzz_random: %lu random inputs in %.0f s (seed %llu), no discrepancy\n", iterations,
         now_seconds() - start, (unsigned long long)seed);
  return 0;
}

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_random: cannot open %s\n", path);
    return 1;
  }
  input_size = fread(input, 1, INPUT_MAX, f);
  fclose(f);
  printf("fuzz_random: replaying %s (%zu bytes)\n", path, input_size);
  fflush(stdout);
  engine_run(input, input_size);
  return 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of the directory, in name order. */
static int replay_directory(const char *path, int *count) {
  DIR *dir = opendir(path);
  if (!dir) {
    (*count)++;
    return replay_file(path);
  }
  char *names[1024];
  size_t n = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL && n < 1024;)
    if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
  closedir(dir);
  qsort(names, n, sizeof names[0], compare_names);
  int failures = 0;
  for (size_t i = 0; i < n; i++) {
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, names[i]);
    failures += replay_file(file);
    (*count)++;
    free(names[i]);
  }
  return failures;
}

int main(int argc, char **argv) {
  double seconds = 60;
  uint64_t seed = 1;
  int replayed = 0, failures = 0;
  bool replay = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else {
      replay = true;
      failures += replay_directory(argv[i], &replayed);
    }
  }
  if (!replay) return run_random(seconds, seed);
  printf("fuzz_random: %d inputs replayed, %d unreadable\n", replayed, failures);
  return failures == 0 && replayed > 0 ? 0 : 1;
}
