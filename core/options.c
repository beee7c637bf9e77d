/*
 * options.c - the copy's options: defaults, the <PREFIX>OPTIONS environment
 * variable (its name derives from the prefix, so copies never read each
 * other's settings), get and set.
 */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>

/* ThreadSanitizer kills a fork() child that starts a thread, and a copy
 * first used in a child cannot tell it is one: its builds start no purger
 * unless purge_thread=1 is set (the tests of the purger set it). */
#if defined(NSALLOC_TSAN)
#define PURGE_THREAD_DEFAULT 0
#else
#define PURGE_THREAD_DEFAULT 1
#endif

static const struct option_info {
  const char *name;
  long min, max, initial;
} option_info[NSALLOC_OPTION_COUNT] = {
    [NSALLOC_OPTION_PURGE_DELAY_MS] = {"purge_delay_ms", -1, LONG_MAX, 500},
    [NSALLOC_OPTION_SEGMENT_CACHE] = {"segment_cache", 0, NSALLOC_SEGMENT_CACHE_MAX, 256},
    [NSALLOC_OPTION_FOREIGN_POLICY] = {"foreign_policy", NSALLOC_POLICY_ABORT,
                                       NSALLOC_POLICY_REPORT, NSALLOC_POLICY_ABORT},
    [NSALLOC_OPTION_HUGE_PAGES] = {"huge_pages", 0, 2, 1},
    [NSALLOC_OPTION_PURGE_THREAD] = {"purge_thread", 0, 1, PURGE_THREAD_DEFAULT},
    [NSALLOC_OPTION_SEGMENT_HUGE_PAGES] = {"segment_huge_pages", 0, 2, 1},
};

static bool option_parse_value(nsalloc_option_t option, const char *text, size_t length,
                               long *value) {
  if (option == NSALLOC_OPTION_FOREIGN_POLICY) {
    if (length == 5 && memcmp(text, "abort", 5) == 0)
      *value = NSALLOC_POLICY_ABORT;
    else if (length == 6 && memcmp(text, "report", 6) == 0)
      *value = NSALLOC_POLICY_REPORT;
    else
      return false;
    return true;
  }
  char buffer[32];
  if (length == 0 || length >= sizeof buffer) return false;
  memcpy(buffer, text, length);
  buffer[length] = '\0';
  char *end;
  errno = 0;
  *value = strtol(buffer, &end, 10);
  return errno == 0 && *end == '\0' && *value >= option_info[option].min &&
         *value <= option_info[option].max;
}

/* "name=value,name=value": each bad entry is reported and skipped. */
static void options_parse(const char *variable, const char *text) {
  while (*text) {
    size_t length = strcspn(text, ",");
    const char *equals = memchr(text, '=', length);
    bool known = false;
    for (size_t i = 0; equals && i < NSALLOC_OPTION_COUNT && !known; i++) {
      size_t name_length = (size_t)(equals - text);
      if (strlen(option_info[i].name) != name_length ||
          memcmp(option_info[i].name, text, name_length) != 0)
        continue;
      long value;
      known = option_parse_value((nsalloc_option_t)i, equals + 1, length - name_length - 1, &value);
      if (known) relaxed_store(&copy.options[i], value);
    }
    if (!known) nsalloc_message("%s: ignoring bad entry '%.*s'", variable, (int)length, text);
    text += length + (text[length] == ',');
  }
}

static void options_init(void) {
  for (size_t i = 0; i < NSALLOC_OPTION_COUNT; i++)
    relaxed_store(&copy.options[i], option_info[i].initial);
  char variable[64];
  size_t n = 0;
  for (const char *c = NSALLOC_PREFIX_STRING; *c && n < sizeof variable - 8; c++)
    variable[n++] = (char)toupper((unsigned char)*c);
  memcpy(variable + n, "OPTIONS", 8);
  const char *text = getenv(variable);
  if (text) options_parse(variable, text);
#ifdef NSALLOC_DEFAULT_FORWARD
  /* A build may route foreign pointers to a fixed fallback (the override
   * library hands blocks that predate it back to the C library). */
  copy.forward = (nsalloc_forward_t)NSALLOC_DEFAULT_FORWARD;
  copy.forward_is_fallback = true;
  relaxed_store(&copy.options[NSALLOC_OPTION_FOREIGN_POLICY], NSALLOC_POLICY_FORWARD);
#endif
}

long nsalloc_option_get(nsalloc_option_t option) {
  copy_init();
  return (unsigned)option < NSALLOC_OPTION_COUNT ? copy_option(option) : -1;
}

int nsalloc_option_set(nsalloc_option_t option, long value) {
  copy_init();
  if ((unsigned)option >= NSALLOC_OPTION_COUNT || value < option_info[option].min ||
      value > option_info[option].max)
    return EINVAL;
  long old = copy_option(option);
  relaxed_store(&copy.options[option], value);
  if (option == NSALLOC_OPTION_PURGE_THREAD) purger_option_set(value != 0);
  if (option == NSALLOC_OPTION_PURGE_DELAY_MS && old < 0 && value >= 0) purge_delay_resumed(value);
  return 0;
}
