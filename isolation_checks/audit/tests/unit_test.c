/*
 * unit_test.c - the audit's parts on inputs built in memory: the nsalloc
 * identification record parser, the bounded name collections, the signature
 * rules (symbols and strings), and the set-level judgement (who can share a
 * process).
 */
#include "artifact.h"
#include "evidence.h"
#include "findings.h"
#include "names.h"
#include "nsalloc_id.h"
#include "signatures.h"
#include "test_util.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

static void parse(const char *record, nsalloc_id_t *id) {
  nsalloc_id_parse(record, strlen(record) + 1, id);
}

static void test_record_valid(void) {
  nsalloc_id_t id;
  parse("NSALLOC-ID:1 prefix=nsalloc_ version=0.1.0 visibility=hidden tls=gnu2", &id);
  CHECK(id.valid);
  CHECK(strcmp(id.prefix, "nsalloc_") == 0);
  CHECK(strcmp(id.version, "0.1.0") == 0);
  CHECK(id.hidden);
  CHECK(strcmp(id.tls, "gnu2") == 0);
  nsalloc_id_free(&id);
  parse("NSALLOC-ID:1 prefix=Beam2_ version=10.20.30 visibility=default tls=initial-exec", &id);
  CHECK(id.valid);
  CHECK(!id.hidden);
  CHECK(strcmp(id.tls, "initial-exec") == 0);
  nsalloc_id_free(&id);
}

static void test_record_malformed(void) {
  static const char *const bad[] = {
      "NSALLOC-ID:1 prefix=a_ version=0.1.0 visibility=hidden",              /* no tls */
      "NSALLOC-ID:1 version=0.1.0 prefix=a_ visibility=hidden tls=gnu2",     /* order */
      "NSALLOC-ID:1 prefix=a_ version=0.1 visibility=hidden tls=gnu2",       /* x.y */
      "NSALLOC-ID:1 prefix=a_ version=0.1.0 visibility=internal tls=gnu2",   /* visibility */
      "NSALLOC-ID:1 prefix=a_ version=0.1.0 visibility=hidden tls=local",    /* tls */
      "NSALLOC-ID:1 prefix=1a_ version=0.1.0 visibility=hidden tls=gnu2",    /* prefix */
      "NSALLOC-ID:1 prefix=a-b version=0.1.0 visibility=hidden tls=gnu2",    /* prefix */
      "NSALLOC-ID:1 prefix= version=0.1.0 visibility=hidden tls=gnu2",       /* empty */
      "NSALLOC-ID:1 prefix=a_ version=0.1.0 visibility=hidden tls=gnu2 x=1", /* extra */
  };
  for (size_t i = 0; i < TEST_COUNT(bad); i++) {
    nsalloc_id_t id;
    parse(bad[i], &id);
    CHECK(!id.valid);
    CHECK(strcmp(id.text, bad[i]) == 0); /* still reported, verbatim */
    CHECK(id.prefix == NULL);
    nsalloc_id_free(&id);
  }
}

static void test_record_bounds(void) {
  /* Not NUL-terminated within the bytes available: parsed up to the end. */
  const char record[] = "NSALLOC-ID:1 prefix=a_ version=0.1.0 visibility=hidden tls=gnu2XYZ";
  nsalloc_id_t id;
  nsalloc_id_parse(record, strlen(record) - 3, &id);
  CHECK(id.valid);
  nsalloc_id_free(&id);
  /* Longer than NSALLOC_ID_MAX_CHARS: malformed, text truncated. */
  char long_record[NSALLOC_ID_MAX_CHARS * 2];
  memset(long_record, 'x', sizeof long_record);
  memcpy(long_record, NSALLOC_ID_MAGIC, strlen(NSALLOC_ID_MAGIC));
  long_record[sizeof long_record - 1] = '\0';
  parse(long_record, &id);
  CHECK(!id.valid);
  CHECK_EQ(strlen(id.text), NSALLOC_ID_MAX_CHARS);
  nsalloc_id_free(&id);
  /* Control bytes are printed as '?'. */
  parse("NSALLOC-ID:1 prefix=a\x01", &id);
  CHECK(!id.valid);
  CHECK(strcmp(id.text, "NSALLOC-ID:1 prefix=a?") == 0);
  nsalloc_id_free(&id);
}

static void test_sample_keeps_smallest(void) {
  sample_t sample = {0};
  const char *names[] = {"m", "c", "x", "a", "c", "b", "z"};
  for (size_t i = 0; i < TEST_COUNT(names); i++)
    sample_add(&sample, names[i]);
  CHECK_EQ(sample.count, 7);
  CHECK_EQ(sample.kept, 3);
  CHECK(strcmp(sample.names[0], "a") == 0);
  CHECK(strcmp(sample.names[1], "b") == 0);
  CHECK(strcmp(sample.names[2], "c") == 0);
  sample_free(&sample);
}

static void test_nameset_sorted_bounded(void) {
  nameset_t set = {0};
  nameset_add(&set, "free");
  nameset_add(&set, "calloc");
  nameset_add(&set, "malloc");
  nameset_add(&set, "free");
  CHECK_EQ(set.len, 3);
  CHECK(strcmp(set.items[0], "calloc") == 0 && strcmp(set.items[2], "malloc") == 0);
  CHECK(nameset_contains(&set, "free"));
  CHECK(!nameset_contains(&set, "realloc"));
  char name[32];
  for (int i = 0; i < NAMESET_LIMIT + 10; i++) {
    snprintf(name, sizeof name, "sym_%06d", i);
    nameset_add(&set, name);
  }
  CHECK_EQ(set.len, NAMESET_LIMIT);
  CHECK(set.overflowed);
  nameset_free(&set);
}

static void test_symbol_rules(void) {
  CHECK_EQ(family_of_symbol("je_arena_boot"), FAMILY_JEMALLOC);
  CHECK_EQ(family_of_symbol("mallocx"), FAMILY_JEMALLOC);
  CHECK_EQ(family_of_symbol("_rjem_malloc"), FAMILY_JEMALLOC);
  /* mallctl and its two siblings exactly; a program's own helpers named
   * after it (redis's mallctl_int) are no signature. */
  CHECK_EQ(family_of_symbol("mallctl"), FAMILY_JEMALLOC);
  CHECK_EQ(family_of_symbol("mallctlnametomib"), FAMILY_JEMALLOC);
  CHECK_EQ(family_of_symbol("mallctlbymib"), FAMILY_JEMALLOC);
  CHECK_EQ(family_of_symbol("mallctl_int"), FAMILY_COUNT);
  CHECK_EQ(family_of_symbol("mallctlx"), FAMILY_COUNT);
  CHECK_EQ(family_of_symbol("mi_heap_new"), FAMILY_MIMALLOC);
  CHECK_EQ(family_of_symbol("_mi_heap_default"), FAMILY_MIMALLOC);
  CHECK_EQ(family_of_symbol("_ZN8tcmalloc11ThreadCache17threadlocal_data_E"), FAMILY_TCMALLOC);
  CHECK_EQ(family_of_symbol("tc_malloc"), FAMILY_TCMALLOC);
  CHECK_EQ(family_of_symbol("rpmalloc_initialize"), FAMILY_RPMALLOC);
  CHECK_EQ(family_of_symbol("sn_rust_alloc"), FAMILY_SNMALLOC);
  CHECK_EQ(family_of_symbol("__scudo_default_options"), FAMILY_SCUDO);
  CHECK_EQ(family_of_symbol("xxmalloc"), FAMILY_HOARD);
  CHECK_EQ(family_of_symbol("dlmalloc"), FAMILY_DLMALLOC);
  CHECK_EQ(family_of_symbol("create_mspace"), FAMILY_DLMALLOC);
  CHECK_EQ(family_of_symbol("GC_malloc_atomic"), FAMILY_BOEHM_GC);
  CHECK_EQ(family_of_symbol("GC_gcollect"), FAMILY_BOEHM_GC);
  CHECK_EQ(family_of_symbol("_ZN15partition_alloc8internal10SlotSpanMdE"), FAMILY_PARTITIONALLOC);
  CHECK_EQ(family_of_symbol("__malloc_context"), FAMILY_MUSL_MALLOCNG);
  CHECK_EQ(family_of_symbol("__libc_malloc_impl"), FAMILY_MUSL_MALLOCNG);
  /* Negative controls: shared or generic names identify nothing. */
  CHECK_EQ(family_of_symbol("GCM_encrypt"), FAMILY_COUNT);
  CHECK_EQ(family_of_symbol("__libc_malloc"), FAMILY_COUNT); /* glibc and musl alike */
  CHECK_EQ(family_of_symbol("_ZN9partition5allocEv"), FAMILY_COUNT);
  CHECK_EQ(family_of_symbol("nallocx"), FAMILY_COUNT);      /* jemalloc and gperftools */
  CHECK_EQ(family_of_symbol("tc_qdisc_add"), FAMILY_COUNT); /* traffic control */
  CHECK_EQ(family_of_symbol("_ZN8tcmalloc16DumpProcSelfMapsEi"), FAMILY_COUNT); /* profiler */
  CHECK_EQ(family_of_symbol("malloc"), FAMILY_COUNT);
  CHECK_EQ(family_of_symbol("mid_point"), FAMILY_COUNT);

  CHECK(standard_allocator_symbol("malloc"));
  CHECK(standard_allocator_symbol("posix_memalign"));
  CHECK(standard_allocator_symbol("_Znwm"));
  CHECK(standard_allocator_symbol("_Znwj")); /* ILP32 operator new */
  CHECK(standard_allocator_symbol("_ZdaPvSt11align_val_t"));
  CHECK(!standard_allocator_symbol("mallocx"));
  CHECK(!standard_allocator_symbol("__libc_malloc"));
  CHECK(!standard_allocator_symbol("_ZdlPFvvE")); /* not operator delete(void *) */
}

/* A family needs its own signature: the malloc_stats() lines every
 * allocator offering malloc_stats() prints (nsalloc's override library
 * included) are not dlmalloc's; ptmalloc's integrity message is. */
static void test_string_signatures(void) {
  static const char stats[] = "system bytes     = %10lu\nin use bytes     = %10lu\n";
  static const char ptmalloc[] = "malloc(): corrupted top size";
  artifact_t *artifact = artifact_new("override.so");
  evidence_bytes(artifact, stats, sizeof stats);
  CHECK(!artifact_has_family(artifact, FAMILY_DLMALLOC));
  evidence_bytes(artifact, ptmalloc, sizeof ptmalloc);
  CHECK(artifact_has_family(artifact, FAMILY_DLMALLOC));
  artifact_free(artifact);
}

/* An artifact holding jemalloc, of the given kind and machine. */
static artifact_t *jemalloc_artifact(const char *path, artifact_kind_t kind, unsigned machine) {
  artifact_t *artifact = artifact_new(path);
  artifact->kind = kind;
  artifact->elf_class = 64;
  artifact->machine = machine;
  artifact->families[FAMILY_JEMALLOC].strings = 1;
  return artifact;
}

static size_t count_kind(const findings_t *findings, const char *kind) {
  size_t n = 0;
  for (size_t i = 0; i < findings->len; i++)
    n += strcmp(findings->items[i].kind, kind) == 0;
  return n;
}

static size_t duplicate_families_in(artifact_t **artifacts, size_t count) {
  audit_set_t set = {0};
  for (size_t i = 0; i < count; i++)
    audit_set_add_artifact(&set, artifacts[i]);
  findings_t findings;
  findings_compute(&set, &findings);
  size_t n = count_kind(&findings, "duplicate-family");
  findings_free(&findings);
  audit_set_free(&set);
  return n;
}

static void test_who_shares_a_process(void) {
  /* Two modules: one process. */
  artifact_t *two_modules[] = {jemalloc_artifact("a.so", KIND_SHARED_OBJECT, EM_X86_64),
                               jemalloc_artifact("b.so", KIND_SHARED_OBJECT, EM_X86_64)};
  CHECK_EQ(duplicate_families_in(two_modules, 2), 1);
  /* An executable and a module it loads. */
  artifact_t *exe_and_module[] = {jemalloc_artifact("app", KIND_EXECUTABLE, EM_X86_64),
                                  jemalloc_artifact("b.so", KIND_SHARED_OBJECT, EM_X86_64)};
  CHECK_EQ(duplicate_families_in(exe_and_module, 2), 1);
  /* Negative controls: two executables never share a process ... */
  artifact_t *two_exes[] = {jemalloc_artifact("app1", KIND_EXECUTABLE, EM_X86_64),
                            jemalloc_artifact("app2", KIND_EXECUTABLE, EM_X86_64)};
  CHECK_EQ(duplicate_families_in(two_exes, 2), 0);
  /* ... nor do modules built for different machines ... */
  artifact_t *two_abis[] = {jemalloc_artifact("a.so", KIND_SHARED_OBJECT, EM_X86_64),
                            jemalloc_artifact("b.so", KIND_SHARED_OBJECT, EM_AARCH64)};
  CHECK_EQ(duplicate_families_in(two_abis, 2), 0);
  /* ... and the C runtime is the process allocator, not a bundled copy. */
  artifact_t *with_libc[] = {jemalloc_artifact("a.so", KIND_SHARED_OBJECT, EM_X86_64),
                             jemalloc_artifact("libc.so.6", KIND_SHARED_OBJECT, EM_X86_64)};
  with_libc[1]->system_runtime = true;
  CHECK_EQ(duplicate_families_in(with_libc, 2), 0);
  /* Link inputs are never loaded: a static archive or an object beside the
   * shared object of the same library is not a second copy in a process. */
  artifact_t *archive_and_module[] = {
      jemalloc_artifact("libjemalloc_pic.a", KIND_ARCHIVE, EM_X86_64),
      jemalloc_artifact("libjemalloc.so.2", KIND_SHARED_OBJECT, EM_X86_64),
      jemalloc_artifact("jemalloc.o", KIND_RELOCATABLE, EM_X86_64)};
  CHECK_EQ(duplicate_families_in(archive_and_module, 3), 0);
}

/* Whether an artifact with this path (and soname) counts as the system runtime. */
static bool system_runtime(const char *path, const char *soname) {
  artifact_t *artifact = artifact_new(path);
  artifact->elf_type = ET_DYN;
  if (soname) artifact->soname = strdup(soname);
  artifact_finish(artifact);
  bool runtime = artifact->system_runtime;
  artifact_free(artifact);
  return runtime;
}

static void test_system_runtime(void) {
  CHECK(system_runtime("/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6"));
  CHECK(system_runtime("libm.so.6", "libm.so.6"));
  CHECK(system_runtime("x/libresolv.so.2", "libresolv.so.2"));
  CHECK(system_runtime("libnss_files.so.2", "libnss_files.so.2"));
  CHECK(system_runtime("libnsl.so.2", NULL));
  CHECK(system_runtime("/usr/lib/x86_64-linux-gnu/libc.a", NULL));
  CHECK(system_runtime("/usr/lib/musl/lib/libc.so", "libc.so")); /* musl's soname */
  CHECK(system_runtime("ld-musl-x86_64.so.1", NULL));
  CHECK(system_runtime("w.whl!lib/libstdc++.so.6", NULL));
  /* Negative controls: libraries whose names only start like the runtime's. */
  CHECK(!system_runtime("libcrypto.so.3", "libcrypto.so.3"));
  CHECK(!system_runtime("libmimalloc.so.2", "libmimalloc.so.2"));
  CHECK(!system_runtime("libcustom.a", NULL));
  CHECK(!system_runtime("libm_ext.so", NULL));
  CHECK(!system_runtime("w.whl!libc/mod.so", NULL));
}

static void test_findings_sorted_by_severity(void) {
  audit_set_t set = {0};
  artifact_t *tls = artifact_new("tls.so");
  tls->kind = KIND_SHARED_OBJECT;
  sample_add(&tls->exported_tls, "slot");
  audit_set_add_artifact(&set, tls);
  audit_set_add_artifact(&set, jemalloc_artifact("a.so", KIND_SHARED_OBJECT, 0));
  audit_set_add_artifact(&set, jemalloc_artifact("b.so", KIND_SHARED_OBJECT, 0));
  findings_t findings;
  findings_compute(&set, &findings);
  CHECK_EQ(findings.len, 2);
  CHECK_EQ(findings.items[0].severity, SEVERITY_HIGH);
  CHECK(strcmp(findings.items[0].message, "jemalloc is bundled in 2 artifacts: a.so and b.so") ==
        0);
  CHECK_EQ(findings.items[1].severity, SEVERITY_MEDIUM);
  CHECK(strcmp(findings.items[1].kind, "exported-tls") == 0);
  findings_free(&findings);
  audit_set_free(&set);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_record_valid),           TEST(test_record_malformed),
      TEST(test_record_bounds),          TEST(test_sample_keeps_smallest),
      TEST(test_nameset_sorted_bounded), TEST(test_symbol_rules),
      TEST(test_who_shares_a_process),   TEST(test_findings_sorted_by_severity),
      TEST(test_system_runtime),         TEST(test_string_signatures),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
