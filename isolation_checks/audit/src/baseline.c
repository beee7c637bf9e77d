/* baseline.c - accepted findings and excluded paths (see baseline.h). */
#include "baseline.h"

#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* Splits line into blank-separated fields in place (*fields grows as
 * needed). A backslash keeps the next character in the field (blanks
 * included) and stays in the field, so the glob still reads it as a quoted
 * character. Returns the field count. */
static size_t split_fields(char *line, char ***fields, size_t *cap) {
  size_t count = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\0') return count;
    xgrow((void **)fields, cap, count, sizeof **fields);
    (*fields)[count++] = p;
    while (*p && *p != ' ' && *p != '\t') {
      if (*p == '\\' && p[1]) p++;
      p++;
    }
    if (*p) *p++ = '\0';
  }
}

void baseline_add_exclude(baseline_t *baseline, const char *glob) {
  xgrow((void **)&baseline->excludes, &baseline->excludes_cap, baseline->nexcludes,
        sizeof baseline->excludes[0]);
  baseline->excludes[baseline->nexcludes++] = xstrdup(glob);
}

static char *parse_line(baseline_t *baseline, char *line, size_t number, char ***scratch,
                        size_t *scratch_cap) {
  size_t count = split_fields(line, scratch, scratch_cap);
  char **fields = *scratch;
  if (count == 0 || fields[0][0] == '#') return NULL;
  if (strcmp(fields[0], "exclude") == 0) {
    if (count != 2) return xasprintf("line %zu: exclude takes one GLOB", number);
    baseline_add_exclude(baseline, fields[1]);
    return NULL;
  }
  if (strcmp(fields[0], "accept") != 0)
    return xasprintf("line %zu: unknown directive '%s' (accept or exclude)", number, fields[0]);
  if (count < 4) return xasprintf("line %zu: accept takes RULE FAMILY GLOB...", number);
  xgrow((void **)&baseline->entries, &baseline->cap, baseline->len, sizeof baseline->entries[0]);
  baseline_entry_t *entry = &baseline->entries[baseline->len++];
  *entry = (baseline_entry_t){.rule = xstrdup(fields[1]),
                              .family = xstrdup(fields[2]),
                              .globs = xmalloc((count - 3) * sizeof(char *)),
                              .nglobs = count - 3,
                              .line = number};
  for (size_t i = 3; i < count; i++)
    entry->globs[i - 3] = xstrdup(fields[i]);
  return NULL;
}

char *baseline_load(baseline_t *baseline, const char *path) {
  FILE *in = fopen(path, "r");
  if (!in) return xasprintf("cannot read the baseline: %s", strerror(errno));
  char *line = NULL, *error = NULL, **fields = NULL;
  size_t cap = 0, fields_cap = 0, number = 0;
  ssize_t length;
  while (!error && (length = getline(&line, &cap, in)) >= 0) {
    number++;
    if (length > 0 && line[length - 1] == '\n') line[length - 1] = '\0';
    error = parse_line(baseline, line, number, &fields, &fields_cap);
  }
  free(fields);
  free(line);
  fclose(in);
  return error;
}

static bool family_matches(const char *pattern, const char *family) {
  if (strcmp(pattern, "*") == 0) return true;
  return family ? strcmp(pattern, family) == 0 : strcmp(pattern, "-") == 0;
}

static bool entry_accepts(const baseline_entry_t *entry, const audit_set_t *set,
                          const finding_t *finding) {
  if (strcmp(entry->rule, finding->kind) != 0 || !family_matches(entry->family, finding->family))
    return false;
  for (size_t a = 0; a < finding->nartifacts; a++) {
    const char *path = set->artifacts[finding->artifacts[a]]->path;
    size_t g = 0;
    while (g < entry->nglobs && fnmatch(entry->globs[g], path, 0) != 0)
      g++;
    if (g == entry->nglobs) return false; /* an artifact the entry does not name */
  }
  return true;
}

void baseline_apply(baseline_t *baseline, const audit_set_t *set, findings_t *findings) {
  for (size_t i = 0; i < findings->len; i++) {
    finding_t *finding = &findings->items[i];
    for (size_t e = 0; e < baseline->len && !finding->accepted_by; e++) {
      if (!entry_accepts(&baseline->entries[e], set, finding)) continue;
      finding->accepted_by = baseline->entries[e].line;
      baseline->entries[e].accepted++;
    }
  }
}

/* A path as a glob matching only itself: glob and field characters are
 * quoted; control characters (which would end the line) become '?'. */
static void write_literal_glob(FILE *out, const char *path) {
  for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
    if (iscntrl(*c))
      fputc('?', out);
    else if (strchr(" \\#*?[]", *c))
      fprintf(out, "\\%c", *c);
    else
      fputc(*c, out);
  }
}

bool baseline_write(const baseline_t *baseline, const audit_set_t *set, const findings_t *findings,
                    FILE *out) {
  fputs("# nsalloc-audit baseline: findings reviewed and accepted (docs/audit.md).\n"
        "# accept RULE FAMILY ARTIFACT-GLOB...  |  exclude PATH-GLOB\n",
        out);
  for (size_t i = 0; i < baseline->nexcludes; i++)
    fprintf(out, "exclude %s\n", baseline->excludes[i]);
  for (size_t i = 0; i < findings->len; i++) {
    const finding_t *finding = &findings->items[i];
    fprintf(out, "accept %s %s", finding->kind, finding->family ? finding->family : "-");
    for (size_t a = 0; a < finding->nartifacts; a++) {
      fputc(' ', out);
      write_literal_glob(out, set->artifacts[finding->artifacts[a]]->path);
    }
    fputc('\n', out);
  }
  return fflush(out) == 0 && !ferror(out);
}

void baseline_free(baseline_t *baseline) {
  for (size_t e = 0; e < baseline->len; e++) {
    baseline_entry_t *entry = &baseline->entries[e];
    for (size_t g = 0; g < entry->nglobs; g++)
      free(entry->globs[g]);
    free(entry->globs);
    free(entry->rule);
    free(entry->family);
  }
  for (size_t i = 0; i < baseline->nexcludes; i++)
    free(baseline->excludes[i]);
  free(baseline->entries);
  free(baseline->excludes);
  memset(baseline, 0, sizeof *baseline);
}
