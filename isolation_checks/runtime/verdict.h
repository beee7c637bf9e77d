/*
 * verdict.h - recording check failures from any thread.
 *
 * A runtime check states what isolation guarantees with ISO_EXPECT; every
 * failed expectation is a violation (the first ones are printed). The process
 * verdict compares the count with what the run expects: none normally, at
 * least one for a negative control (--expect-violation).
 */
#ifndef ISO_VERDICT_H
#define ISO_VERDICT_H

#include <stddef.h>

#define ISO_EXPECT(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) iso_violation(__FILE__, __LINE__, __VA_ARGS__);                                   \
  } while (0)

/* mingw-w64: the checks build with __USE_MINGW_ANSI_STDIO (C99 printf), whose
 * formats GCC knows as gnu_printf ("printf" there means the MSVCRT dialect). */
#if defined(__MINGW32__)
#define ISO_PRINTF gnu_printf
#else
#define ISO_PRINTF printf
#endif

void iso_violation(const char *file, int line, const char *format, ...)
    __attribute__((format(ISO_PRINTF, 3, 4)));
size_t iso_violation_count(void);

#endif
