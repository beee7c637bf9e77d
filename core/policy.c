/*
 * policy.c - diagnostics and what happens to foreign and invalid pointers.
 *
 * A foreign pointer (not in this copy's segment map) follows the copy's
 * policy: forward it to the configured hooks, report it (count, message, leave
 * it alone) or abort with a message. A pointer INTO this copy that is not a
 * live block start (interior pointer, double free, unallocated memory) is
 * never forwarded: it is reported under REPORT and aborts otherwise.
 *
 * A foreign pointer in another nsalloc copy's segment (signature.c) is named
 * with its owner, and is never handed to a build's fixed fallback (the
 * override library's C library hooks, which would take it for their own):
 * there it aborts, as under the default policy. Hooks a host installed with
 * nsalloc_set_foreign_policy() still receive it: routing blocks between
 * copies is what hosts install them for.
 *
 * Every diagnostic names the copy by prefix and module file:
 * "nsalloc[<prefix> in <module>]: ...".
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *op_name(enum api_op op) {
  static const char *const names[] = {
      [OP_MALLOC] = "malloc",
      [OP_FREE] = "free",
      [OP_REALLOC] = "realloc",
      [OP_USABLE_SIZE] = "usable_size",
      [OP_FREE_SIZED] = "free_sized",
      [OP_HEAP_FREE] = "heap_free",
      [OP_HEAP_DELETE] = "heap_delete",
      [OP_HEAP_DESTROY] = "heap_destroy",
      [OP_HEAP_COLLECT] = "heap_collect",
  };
  return names[op];
}

/* "<prefix> in <module>" for the copy whose state is at `copy_state`. */
static void copy_name(char *out, size_t size, const char *prefix, const void *copy_state) {
  int n = snprintf(out, size, "%s in ", prefix);
  if (n < 0 || (size_t)n >= size || !prim_module_name(copy_state, out + n, size - (size_t)n))
    snprintf(out, size, "%s in an unknown module", prefix);
}

/* One diagnostic line, "nsalloc[<prefix> in <module>]: ...", to the handler
 * or stderr: the core's own and, through nsalloc_message, the bindings'. */
static void vmessage(const char *format, va_list args) {
  char line[1024], self[512];
  copy_name(self, sizeof self, NSALLOC_PREFIX_STRING, &copy);
  int n = snprintf(line, sizeof line - 1, "nsalloc[%s]: ", self);
  if (n < 0 || (size_t)n >= sizeof line - 1) n = 0;
  vsnprintf(line + n, sizeof line - 1 - (size_t)n, format, args); /* room for the newline */
  if (copy.message_fn) {
    copy.message_fn(line, copy.message_arg);
  } else {
    size_t length = strlen(line);
    line[length] = '\n';
    prim_write_error(line, length + 1);
  }
}

void nsalloc_message(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vmessage(format, args);
  va_end(args);
}

static void diagnose(enum api_op op, const void *p, const char *what, bool fatal) {
  nsalloc_message("%s(" ADDRESS_FORMAT "): %s%s", op_name(op), (uintptr_t)p, what,
                  fatal ? "; aborting" : "");
  if (fatal) abort();
}

/* Count a foreign pointer and apply the policy. Returns true to forward it. */
static bool foreign_pointer(enum api_op op, const void *p, const char *report_outcome) {
  copy_init();
  atomic_fetch_add(&copy.foreign, 1);
  long policy = copy_option(NSALLOC_OPTION_FOREIGN_POLICY);
  /* The owner is looked for (a few system calls) only when a message may
   * name it or the fallback must not receive it: never on a host's forward. */
  segment_signature_t owner;
  bool other_copy =
      (policy != NSALLOC_POLICY_FORWARD || copy.forward_is_fallback) && signature_find(p, &owner);
  if (policy == NSALLOC_POLICY_FORWARD && !other_copy) {
    atomic_fetch_add(&copy.forwarded, 1);
    return true;
  }
  char what[640] = "pointer not owned by this copy (foreign)";
  if (other_copy) {
    char name[512];
    copy_name(name, sizeof name, owner.prefix, (const void *)(uintptr_t)owner.owner);
    snprintf(what, sizeof what, "pointer not owned by this copy (foreign): a block of nsalloc[%s]",
             name);
  }
  if (policy == NSALLOC_POLICY_REPORT)
    nsalloc_message("%s(" ADDRESS_FORMAT "): %s; %s", op_name(op), (uintptr_t)p, what,
                    report_outcome);
  else
    diagnose(op, p, what, true);
  return false;
}

/* forward_ctx: the caller's own (nsalloc_forwarding_free/realloc), or NULL
 * for the registered copy.forward.ctx. */
static void foreign_free(enum api_op op, void *p, void *forward_ctx) {
  if (foreign_pointer(op, p, "left alone"))
    copy.forward.free(forward_ctx ? forward_ctx : copy.forward.ctx, p);
}

static void *foreign_realloc(void *p, size_t size, void *forward_ctx) {
  if (foreign_pointer(OP_REALLOC, p, "realloc refused"))
    return copy.forward.realloc(forward_ctx ? forward_ctx : copy.forward.ctx, p, size);
  errno = EINVAL;
  return NULL;
}

static size_t foreign_usable_size(const void *p) {
  if (foreign_pointer(OP_USABLE_SIZE, p, "size reported as 0") && copy.forward.usable_size)
    return copy.forward.usable_size(copy.forward.ctx, p);
  return 0;
}

static void invalid_pointer(enum api_op op, const void *p, enum locate_result why) {
  atomic_fetch_add(&copy.invalid, 1);
  const char *what = why == LOCATE_DOUBLE_FREE ? "double free (the block is already free)"
                     : why == LOCATE_INTERIOR  ? "interior pointer (not the start of a block)"
                                               : "no block is allocated at this address";
  diagnose(op, p, what, copy_option(NSALLOC_OPTION_FOREIGN_POLICY) != NSALLOC_POLICY_REPORT);
}

int nsalloc_set_foreign_policy(nsalloc_policy_t policy, const nsalloc_forward_t *forward) {
  copy_init();
  if (policy == NSALLOC_POLICY_FORWARD) {
    if (!forward || !forward->free || !forward->realloc) return EINVAL;
    copy.forward = *forward;
    copy.forward_is_fallback = false;
  } else if (policy != NSALLOC_POLICY_ABORT && policy != NSALLOC_POLICY_REPORT) {
    return EINVAL;
  }
  relaxed_store(&copy.options[NSALLOC_OPTION_FOREIGN_POLICY], policy);
  return 0;
}

void nsalloc_set_message_handler(nsalloc_message_fn handler, void *arg) {
  copy.message_arg = arg;
  copy.message_fn = handler;
}
