#include "test_util.h"

#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <io.h>
#include <signal.h>
#include <windows.h>
#else
#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#endif

int test_failures;

int test_main(int argc, char **argv, const test_case *tests, size_t count) {
  int passed = 0, failed = 0;
  for (size_t i = 0; i < count; i++) {
    bool selected = argc < 2;
    for (int a = 1; a < argc; a++)
      selected |= strcmp(argv[a], tests[i].name) == 0;
    if (!selected) continue;
    int before = test_failures;
    tests[i].run();
    bool ok = test_failures == before;
    printf("%s %s\n", ok ? "PASS" : "FAIL", tests[i].name);
    fflush(stdout);
    ok ? passed++ : failed++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}

bool test_names_copy(const char *text, const char *prefix, const char *module_part) {
  char start[96];
  snprintf(start, sizeof start, "nsalloc[%s in ", prefix);
  for (const char *name = strstr(text, start); name; name = strstr(name + 1, start)) {
    const char *module = name + strlen(start), *end = strchr(module, ']');
    const char *found = strstr(module, module_part);
    if (end && found && found + strlen(module_part) <= end) return true;
  }
  return false;
}

uint64_t test_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* The pattern: 64-bit words derived from the seed and the word's index (a
 * tail shorter than a word takes the low bytes of the next word). */
static uint64_t pattern_word(size_t i, uint64_t seed) {
  return (seed ^ 0x9E3779B97F4A7C15ULL) * (i + 1) ^ ((uint64_t)i << 32);
}

void test_fill(void *p, size_t size, uint64_t seed) {
  uint8_t *bytes = p;
  size_t words = size / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t w = pattern_word(i, seed);
    memcpy(bytes + i * 8, &w, 8);
  }
  uint64_t tail = pattern_word(words, seed);
  memcpy(bytes + words * 8, &tail, size % 8);
}

bool test_verify(const void *p, size_t size, uint64_t seed) {
  const uint8_t *bytes = p;
  size_t words = size / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t w = pattern_word(i, seed);
    if (memcmp(bytes + i * 8, &w, 8) != 0) return false;
  }
  uint64_t tail = pattern_word(words, seed);
  return memcmp(bytes + words * 8, &tail, size % 8) == 0;
}

#if defined(_WIN32)
typedef struct child_call {
  void (*fn)(void *);
  void *arg;
} child_call;

#define CHILD_ABORTED 0x4142 /* thread exit code: abort() was called */

static void child_abort_handler(int sig) {
  (void)sig;
  ExitThread(CHILD_ABORTED);
}

static DWORD WINAPI child_thread(LPVOID p) {
  child_call *call = p;
  signal(SIGABRT, child_abort_handler);
  call->fn(call->arg);
  return 0;
}

int test_in_child(void (*fn)(void *), void *arg, char *output, size_t capacity) {
  FILE *capture = tmpfile();
  if (!capture) return -1;
  fflush(NULL);
  int saved = _dup(2);
  _dup2(_fileno(capture), 2);
  child_call call = {fn, arg};
  HANDLE thread = CreateThread(NULL, 0, child_thread, &call, 0, NULL);
  DWORD code = 1;
  if (thread) {
    WaitForSingleObject(thread, INFINITE);
    GetExitCodeThread(thread, &code);
    CloseHandle(thread);
  }
  signal(SIGABRT, SIG_DFL);
  fflush(stderr);
  _dup2(saved, 2);
  _close(saved);
  rewind(capture);
  size_t length = fread(output, 1, capacity - 1, capture);
  output[length] = '\0';
  fclose(capture);
  if (!thread) return -1;
  return code == CHILD_ABORTED ? SIGABRT : (int)(code & 0xff) << 8;
}
#else
int test_in_child(void (*fn)(void *), void *arg, char *output, size_t capacity) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    fn(arg);
    _exit(0);
  }
  close(fds[1]);
  size_t length = 0;
  ssize_t n;
  while (length + 1 < capacity && (n = read(fds[0], output + length, capacity - 1 - length)) > 0)
    length += (size_t)n;
  output[length] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

#endif

#if defined(_WIN32)
/* wine's ntdll exports wine_get_version; Windows' does not. */
static bool under_wine(void) {
  HMODULE ntdll = GetModuleHandleA("ntdll.dll");
  return ntdll && GetProcAddress(ntdll, "wine_get_version");
}
#endif

bool test_under_valgrind(void) {
  return getenv("NSALLOC_UNDER_VALGRIND") != NULL;
}

bool test_threads_serialised(void) {
  return test_under_valgrind();
}

void test_spin_pause(void) {
  if (!test_threads_serialised()) return;
#if defined(_WIN32)
  SwitchToThread();
#else
  sched_yield();
#endif
}

static size_t slowdown(void) {
  if (test_threads_serialised()) return 20;
#if defined(_WIN32)
  if (under_wine()) return 4; /* thread creation and VirtualAlloc are slow there */
#endif
#if defined(__SANITIZE_THREAD__)
  return 20;
#elif defined(__SANITIZE_ADDRESS__)
  return 4;
#else
  return 1;
#endif
}

size_t test_scale(size_t n) {
  return n / slowdown() ? n / slowdown() : 1;
}
bool test_instrumented(void) {
  return slowdown() > 1;
}

#if !defined(_WIN32)
long test_minor_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

void test_sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0)
    continue;
}

long test_threads_named(const char *name) {
#if defined(__linux__)
  DIR *tasks = opendir("/proc/self/task");
  if (!tasks) return -1;
  long named = 0;
  for (struct dirent *task; (task = readdir(tasks)) != NULL;) {
    if (task->d_name[0] == '.') continue;
    char path[300], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", task->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* the thread exited meanwhile */
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
    named += strcmp(comm, name) == 0;
  }
  closedir(tasks);
  return named;
#else
  (void)name;
  return -1;
#endif
}

const char *test_purger_name(const char *prefix) {
  static char name[16];
  snprintf(name, sizeof name, "%spurge", prefix);
  return name;
}

bool test_threads_named_become(const char *name, long count, long ms) {
  for (long waited = 0;; waited += 10) {
    if (test_threads_named(name) == count) return true;
    if (waited >= ms) return false;
    test_sleep_ms(10);
  }
}
#endif

#if defined(__linux__)
bool test_mapping_has_flag(const void *p, const char *flag) {
  FILE *smaps = fopen("/proc/self/smaps", "r");
  if (!smaps) return false;
  char line[512];
  bool inside = false, found = false;
  while (fgets(line, sizeof line, smaps)) {
    unsigned long start, end;
    if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = (uintptr_t)p >= start && (uintptr_t)p < end;
    } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      char needle[8];
      snprintf(needle, sizeof needle, " %s", flag);
      found = strstr(line, needle) != NULL;
      break;
    }
  }
  fclose(smaps);
  return found;
}
#endif
