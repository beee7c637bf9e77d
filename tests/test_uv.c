/*
 * test_uv.c - libuv running on a copy (nsalloc_uv.h): every libuv API that
 * hands memory across - the file system calls whose results the C library
 * allocates (realpath, scandir), the ones libuv allocates itself (readlink,
 * opendir/readdir, mkdtemp), run inline and on the thread pool; getaddrinfo;
 * the passwd, interface and CPU queries; work items on the thread pool; a TCP
 * echo on loopback. Each test checks that the copy got back every byte libuv
 * took from it, and that every foreign pointer (realpath's buffer, freed by
 * libuv with the copy's free) went to the C library, exactly one per
 * successful realpath and none for scandir, homedir and getenv. Negative
 * controls: with the copy's default policy (abort), realpath's buffer kills
 * the process; with the report policy, the exact check fails.
 */
#include <uv.h>

#include "nsalloc_uv.h"
#include "test_util.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- accounting: what a test leaves in the copy --------------------------- */
static nsalloc_stats_t baseline;

static void begin(void) {
  nsalloc_stats(&baseline);
}

/* Everything libuv allocated was freed, nothing invalid met the copy, and
 * every foreign pointer was forwarded. Returns how many were. */
static uint64_t end(void) {
  nsalloc_stats_t now;
  nsalloc_stats(&now);
  CHECK_EQ(now.in_use_bytes, baseline.in_use_bytes);
  CHECK_EQ(now.invalid_pointers, baseline.invalid_pointers);
  CHECK_EQ(now.forwarded - baseline.forwarded, now.foreign_pointers - baseline.foreign_pointers);
  return now.forwarded - baseline.forwarded;
}

static uv_loop_t *loop_new(void) {
  uv_loop_t *loop = nsalloc_malloc(sizeof *loop);
  CHECK_EQ(uv_loop_init(loop), 0);
  return loop;
}

static void loop_run_and_delete(uv_loop_t *loop) {
  CHECK_EQ(uv_run(loop, UV_RUN_DEFAULT), 0);
  CHECK_EQ(uv_loop_close(loop), 0);
  nsalloc_free(loop);
}

/* ---- file system ------------------------------------------------------------ */
static char directory[64]; /* made by test_fs, with a file and a link to it */

static void fs_done(uv_fs_t *request) {
  CHECK(request->result >= 0);
  if (request->fs_type == UV_FS_REALPATH) CHECK(strstr(request->ptr, "nsalloc-uv-") != NULL);
  if (request->fs_type == UV_FS_SCANDIR) {
    uv_dirent_t entry;
    int entries = 0;
    while (uv_fs_scandir_next(request, &entry) != UV_EOF)
      entries++;
    CHECK_EQ(entries, 2);
  }
  uv_fs_req_cleanup(request);
  nsalloc_free(request);
}

static void test_fs(void) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  begin();
  uv_loop_t *loop = loop_new();
  uv_fs_t request;
  /* mkdtemp: libuv copies the template into a block of the copy. */
  CHECK_EQ(uv_fs_mkdtemp(loop, &request, "/tmp/nsalloc-uv-XXXXXX", NULL), 0);
  snprintf(directory, sizeof directory, "%s", request.path);
  uv_fs_req_cleanup(&request);
  char file[96], link[96];
  snprintf(file, sizeof file, "%s/file", directory);
  snprintf(link, sizeof link, "%s/link", directory);
  int fd = uv_fs_open(loop, &request, file, UV_FS_O_CREAT | UV_FS_O_WRONLY, 0600, NULL);
  CHECK(fd >= 0);
  uv_fs_req_cleanup(&request);
  CHECK_EQ(uv_fs_close(loop, &request, fd, NULL), 0);
  uv_fs_req_cleanup(&request);
  CHECK_EQ(uv_fs_symlink(loop, &request, file, link, 0, NULL), 0);
  uv_fs_req_cleanup(&request);

  /* realpath: the C library's buffer, freed by uv_fs_req_cleanup. */
  CHECK_EQ(uv_fs_realpath(loop, &request, link, NULL), 0);
  CHECK_EQ(strcmp(request.ptr, file), 0);
  uv_fs_req_cleanup(&request);
  CHECK_EQ(uv_fs_readlink(loop, &request, link, NULL), 0);
  CHECK_EQ(strcmp(request.ptr, file), 0);
  uv_fs_req_cleanup(&request);
  CHECK_EQ(uv_fs_scandir(loop, &request, directory, 0, NULL), 2);
  uv_dirent_t entry;
  int entries = 0;
  while (uv_fs_scandir_next(&request, &entry) != UV_EOF)
    entries++;
  CHECK_EQ(entries, 2);
  uv_fs_req_cleanup(&request);

  CHECK_EQ(uv_fs_opendir(loop, &request, directory, NULL), 0);
  uv_dir_t *dir = request.ptr;
  uv_fs_req_cleanup(&request);
  uv_dirent_t dirents[4];
  dir->dirents = dirents;
  dir->nentries = 4;
  CHECK_EQ(uv_fs_readdir(loop, &request, dir, NULL), 2);
  for (int i = 0; i < 2; i++)
    CHECK(strcmp(dirents[i].name, "file") == 0 || strcmp(dirents[i].name, "link") == 0);
  uv_fs_req_cleanup(&request); /* frees the names */
  CHECK_EQ(uv_fs_closedir(loop, &request, dir, NULL), 0);
  uv_fs_req_cleanup(&request);

  /* The same calls on the thread pool: allocated there, freed here. */
  for (int i = 0; i < 8; i++) {
    uv_fs_t *async = nsalloc_malloc(sizeof *async);
    CHECK_EQ(i % 2 ? uv_fs_scandir(loop, async, directory, 0, fs_done)
                   : uv_fs_realpath(loop, async, link, fs_done),
             0);
  }
  loop_run_and_delete(loop);

  unlink(link), unlink(file), rmdir(directory);
  CHECK(end() >= 1 + 4); /* realpath's buffers, inline and on the pool */
}

/* ---- getaddrinfo -------------------------------------------------------------- */
static int resolved;

static void on_resolved(uv_getaddrinfo_t *request, int status, struct addrinfo *result) {
  CHECK_EQ(status, 0);
  CHECK(result != NULL && result->ai_family == AF_INET);
  uv_freeaddrinfo(result);
  nsalloc_free(request);
  resolved++;
}

static void test_getaddrinfo(void) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  begin();
  uv_loop_t *loop = loop_new();
  struct addrinfo hints = {.ai_family = AF_INET, .ai_flags = AI_NUMERICHOST};
  for (int i = 0; i < 4; i++) {
    uv_getaddrinfo_t *request = nsalloc_malloc(sizeof *request);
    CHECK_EQ(uv_getaddrinfo(loop, request, on_resolved, "127.0.0.1", "80", &hints), 0);
  }
  uv_getaddrinfo_t request; /* synchronous */
  CHECK_EQ(uv_getaddrinfo(loop, &request, NULL, "127.0.0.1", NULL, &hints), 0);
  uv_freeaddrinfo(request.addrinfo);
  loop_run_and_delete(loop);
  CHECK_EQ(resolved, 4);
  end();
}

/* ---- system queries ------------------------------------------------------------- */
static void test_system_queries(void) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  begin();
  uv_passwd_t passwd;
  CHECK_EQ(uv_os_get_passwd(&passwd), 0);
  CHECK(passwd.username != NULL && passwd.homedir != NULL);
  uv_os_free_passwd(&passwd);
  uv_interface_address_t *addresses;
  int count;
  CHECK_EQ(uv_interface_addresses(&addresses, &count), 0);
  bool loopback = false;
  for (int i = 0; i < count; i++)
    loopback |= addresses[i].is_internal != 0;
  CHECK(loopback);
  uv_free_interface_addresses(addresses, count);
  uv_cpu_info_t *cpus;
  CHECK_EQ(uv_cpu_info(&cpus, &count), 0);
  CHECK(count >= 1 && cpus[0].model != NULL);
  uv_free_cpu_info(cpus, count);
  char home[1024];
  size_t size = sizeof home;
  CHECK_EQ(uv_os_homedir(home, &size), 0);
  end();
}

/* ---- the thread pool -------------------------------------------------------------- */
typedef struct job {
  uv_work_t request;
  uint64_t seed;
  bool ok;
} job;

static atomic_int completed;

static void do_work(uv_work_t *request) {
  job *j = (job *)request;
  void *blocks[32];
  uint64_t rng = j->seed;
  j->ok = true;
  for (int i = 0; i < 32; i++) {
    size_t size = 16 + test_random(&rng) % 5000;
    blocks[i] = nsalloc_malloc(size);
    test_fill(blocks[i], size, j->seed + (uint64_t)i);
    j->ok &= test_verify(blocks[i], size, j->seed + (uint64_t)i);
  }
  for (int i = 0; i < 32; i++)
    nsalloc_free(blocks[i]);
}

static void after_work(uv_work_t *request, int status) {
  job *j = (job *)request;
  CHECK(status == 0 && j->ok);
  atomic_fetch_add(&completed, 1);
  nsalloc_free(j); /* allocated on the loop thread, freed here too */
}

static void test_thread_pool(void) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  begin();
  uv_loop_t *loop = loop_new();
  int items = (int)test_scale(2000);
  for (int i = 0; i < items; i++) {
    job *j = nsalloc_calloc(1, sizeof *j);
    j->seed = (uint64_t)i + 1;
    CHECK_EQ(uv_queue_work(loop, &j->request, do_work, after_work), 0);
  }
  loop_run_and_delete(loop);
  CHECK_EQ(completed, items);
  end();
}

/* ---- TCP echo on loopback ---------------------------------------------------------- */
enum { ECHO_MESSAGES = 64, ECHO_SIZE = 3000 };

typedef struct echo {
  uv_tcp_t server, accepted, client;
  uv_connect_t connect;
  size_t sent, received; /* bytes, on the client */
  uint8_t expected[ECHO_MESSAGES * ECHO_SIZE];
} echo;

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
  (void)handle;
  *buf = uv_buf_init(nsalloc_malloc(suggested), (unsigned)suggested);
}

static void on_written(uv_write_t *request, int status) {
  CHECK_EQ(status, 0);
  nsalloc_free(request->data); /* the buffer */
  nsalloc_free(request);
}

/* Write `size` bytes of a copy of `bytes` on `stream`, with 5 buffers: more
 * than libuv's inline array, so it allocates the buffer list itself. */
static void write_copy(uv_stream_t *stream, const void *bytes, size_t size) {
  uv_write_t *request = nsalloc_malloc(sizeof *request);
  request->data = nsalloc_malloc(size);
  memcpy(request->data, bytes, size);
  uv_buf_t bufs[5];
  size_t part = size / 5;
  for (int i = 0; i < 5; i++)
    bufs[i] = uv_buf_init((char *)request->data + (size_t)i * part,
                          (unsigned)(i == 4 ? size - 4 * part : part));
  CHECK_EQ(uv_write(request, stream, bufs, 5, on_written), 0);
}

static void on_closed(uv_handle_t *handle) {
  (void)handle;
}

static void on_server_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
  if (n > 0) write_copy(stream, buf->base, (size_t)n);
  if (n < 0) uv_close((uv_handle_t *)stream, on_closed);
  nsalloc_free(buf->base);
}

static void on_client_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
  echo *e = stream->data;
  if (n > 0) {
    CHECK(memcmp(buf->base, e->expected + e->received, (size_t)n) == 0);
    e->received += (size_t)n;
    if (e->received == sizeof e->expected) {
      uv_close((uv_handle_t *)&e->client, on_closed);
      uv_close((uv_handle_t *)&e->server, on_closed);
    }
  }
  CHECK(n >= 0 || n == UV_EOF);
  nsalloc_free(buf->base);
}

static void on_connection(uv_stream_t *server, int status) {
  echo *e = server->data;
  CHECK_EQ(status, 0);
  CHECK_EQ(uv_tcp_init(server->loop, &e->accepted), 0);
  CHECK_EQ(uv_accept(server, (uv_stream_t *)&e->accepted), 0);
  CHECK_EQ(uv_read_start((uv_stream_t *)&e->accepted, on_alloc, on_server_read), 0);
}

static void on_connected(uv_connect_t *request, int status) {
  echo *e = request->data;
  CHECK_EQ(status, 0);
  CHECK_EQ(uv_read_start((uv_stream_t *)&e->client, on_alloc, on_client_read), 0);
  for (int i = 0; i < ECHO_MESSAGES; i++)
    write_copy((uv_stream_t *)&e->client, e->expected + i * ECHO_SIZE, ECHO_SIZE);
}

static void test_tcp_echo(void) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  begin();
  uv_loop_t *loop = loop_new();
  echo *e = nsalloc_calloc(1, sizeof *e);
  test_fill(e->expected, sizeof e->expected, 42);
  struct sockaddr_in address;
  CHECK_EQ(uv_ip4_addr("127.0.0.1", 0, &address), 0);
  CHECK_EQ(uv_tcp_init(loop, &e->server), 0);
  e->server.data = e->client.data = e->accepted.data = e->connect.data = e;
  CHECK_EQ(uv_tcp_bind(&e->server, (const struct sockaddr *)&address, 0), 0);
  CHECK_EQ(uv_listen((uv_stream_t *)&e->server, 8, on_connection), 0);
  int length = sizeof address;
  CHECK_EQ(uv_tcp_getsockname(&e->server, (struct sockaddr *)&address, &length), 0);
  CHECK_EQ(uv_tcp_init(loop, &e->client), 0);
  CHECK_EQ(uv_tcp_connect(&e->connect, &e->client, (const struct sockaddr *)&address, on_connected),
           0);
  loop_run_and_delete(loop);
  CHECK_EQ(e->received, sizeof e->expected);
  nsalloc_free(e);
  end();
}

/* ---- C library buffers: each one forwarded, nothing else ------------------------------ */
/* One libuv call each, inline, on a loop of its own. A successful realpath
 * hands libuv glibc's malloc'd result, which uv_fs_req_cleanup frees with the
 * copy's free: exactly one foreign pointer, forwarded to the C library. The
 * others copy into libuv's own blocks or the caller's buffer: none. */
static void call_realpath(uv_loop_t *loop) {
  uv_fs_t request;
  CHECK_EQ(uv_fs_realpath(loop, &request, "/tmp/.", NULL), 0);
  CHECK_EQ(strcmp(request.ptr, "/tmp"), 0);
  uv_fs_req_cleanup(&request);
}

static void call_scandir(uv_loop_t *loop) {
  uv_fs_t request;
  CHECK(uv_fs_scandir(loop, &request, "/", 0, NULL) > 0);
  uv_dirent_t entry;
  while (uv_fs_scandir_next(&request, &entry) != UV_EOF)
    continue;
  uv_fs_req_cleanup(&request);
}

static void call_homedir(uv_loop_t *loop) {
  (void)loop;
  char home[1024];
  size_t size = sizeof home;
  CHECK_EQ(uv_os_homedir(home, &size), 0);
  CHECK(size > 0 && home[0] == '/');
}

static void call_getenv(uv_loop_t *loop) {
  (void)loop;
  char value[64];
  size_t size = sizeof value;
  CHECK_EQ(uv_os_setenv("NSALLOC_UV_TEST", "forwarded"), 0);
  CHECK_EQ(uv_os_getenv("NSALLOC_UV_TEST", value, &size), 0);
  CHECK_EQ(strcmp(value, "forwarded"), 0);
}

/* How many foreign pointers `call` made the copy forward; end() checks that
 * every foreign pointer was forwarded and none was invalid. */
static uint64_t forwarded_by(void (*call)(uv_loop_t *)) {
  uv_loop_t *loop = loop_new();
  begin();
  call(loop);
  uint64_t forwarded = end();
  loop_run_and_delete(loop);
  return forwarded;
}

static void check_each_c_library_buffer_forwarded(void *unused) {
  (void)unused;
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(forwarded_by(call_realpath), 1);
    CHECK_EQ(forwarded_by(call_scandir), 0);
    CHECK_EQ(forwarded_by(call_homedir), 0);
    CHECK_EQ(forwarded_by(call_getenv), 0);
  }
}

static void test_c_library_buffers_forwarded(void) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  check_each_c_library_buffer_forwarded(NULL);
}

/* Negative control: the same check with the copy told to report foreign
 * pointers instead of forwarding them (realpath's buffer is then counted,
 * printed and left alone) must fail, in a child. */
static void check_under_report_policy(void *unused) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  CHECK_EQ(nsalloc_set_foreign_policy(NSALLOC_POLICY_REPORT, NULL), 0);
  check_each_c_library_buffer_forwarded(unused);
  _exit(test_failures ? 3 : 0);
}

static void test_negative_control_unforwarded_buffer_is_caught(void) {
  char output[8192];
  int status = test_in_child(check_under_report_policy, NULL, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  CHECK(strstr(output, "pointer not owned by this copy (foreign)") != NULL);
  CHECK(strstr(output, "CHECK_EQ failed: now.forwarded - baseline.forwarded") != NULL);
}

/* ---- negative control ---------------------------------------------------------------- */
static void realpath_without_forwarding(void *unused) {
  (void)unused;
  CHECK_EQ(uv_replace_allocator(nsalloc_malloc, nsalloc_realloc, nsalloc_calloc, nsalloc_free), 0);
  nsalloc_set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
  uv_loop_t loop;
  CHECK_EQ(uv_loop_init(&loop), 0);
  uv_fs_t request;
  CHECK_EQ(uv_fs_realpath(&loop, &request, "/tmp", NULL), 0);
  uv_fs_req_cleanup(&request);
}

static void test_negative_control_realpath_aborts_without_forwarding(void) {
  char output[2048];
  int status = test_in_child(realpath_without_forwarding, NULL, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  CHECK(strstr(output, "pointer not owned by this copy (foreign)") != NULL);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {TEST(test_fs),
                                    TEST(test_getaddrinfo),
                                    TEST(test_system_queries),
                                    TEST(test_thread_pool),
                                    TEST(test_tcp_echo),
                                    TEST(test_c_library_buffers_forwarded),
                                    TEST(test_negative_control_unforwarded_buffer_is_caught),
                                    TEST(test_negative_control_realpath_aborts_without_forwarding)};
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
