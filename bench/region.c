/*
 * region.c - the run-time support every benchmark executable shares: the
 * measured region (callgrind collection + wall clock), failure and RSS.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

static struct timespec region_start, region_stop;
static struct rusage usage_start, usage_stop;
static int region_state; /* 0 before, 1 inside, 2 after */

void bench_region_begin(void) {
  if (region_state != 0) bench_fail("measured region begun twice");
  region_state = 1;
  clock_gettime(CLOCK_MONOTONIC, &region_start);
  getrusage(RUSAGE_SELF, &usage_start);
  /* Instrumentation, unlike collection, is process-wide: every thread's
   * instructions count (the runner passes --instr-atstart=no). */
  CALLGRIND_START_INSTRUMENTATION;
}

void bench_region_end(void) {
  CALLGRIND_STOP_INSTRUMENTATION;
  getrusage(RUSAGE_SELF, &usage_stop);
  clock_gettime(CLOCK_MONOTONIC, &region_stop);
  if (region_state != 1) bench_fail("measured region ended without a begin");
  region_state = 2;
}

bool bench_region_done(void) {
  return region_state == 2;
}

double bench_region_seconds(void) {
  return (double)(region_stop.tv_sec - region_start.tv_sec) +
         (double)(region_stop.tv_nsec - region_start.tv_nsec) * 1e-9;
}

static double timeval_seconds(struct timeval t) {
  return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

double bench_region_cpu_seconds(void) {
  return timeval_seconds(usage_stop.ru_utime) - timeval_seconds(usage_start.ru_utime) +
         timeval_seconds(usage_stop.ru_stime) - timeval_seconds(usage_start.ru_stime);
}

void bench_fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "%s: ", program_invocation_short_name);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(2);
}

static uint64_t defects;

void bench_defect(const char *format, ...) {
  if (defects++ >= 3) return;
  va_list args;
  va_start(args, format);
  fprintf(stderr, "%s: defect: ", program_invocation_short_name);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

uint64_t bench_defect_count(void) {
  return defects;
}

size_t bench_rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * (size_t)sysconf(_SC_PAGESIZE) / 1024;
}
