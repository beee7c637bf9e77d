/*
 * policy.c - diagnostics and what happens to foreign and invalid pointers.
 *
 * A foreign pointer (not in this copy's segment map) follows the copy's
 * policy: forward it to the configured hooks, report it (count, message, leave
 * it alone) or abort with a message. A pointer INTO this copy that is not a
 * live block start (interior pointer, double free, unallocated memory) is
 * never forwarded: it is reported under REPORT and aborts otherwise.
 */
#include "internal.h"

#include <inttypes.h>
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

/* One diagnostic line, "nsalloc[<prefix>]: ...", to the handler or stderr. */
static void message(const char *format, ...) {
  char line[320];
  int n = snprintf(line, sizeof line, "nsalloc[%s]: ", NSALLOC_PREFIX_STRING);
  va_list args;
  va_start(args, format);
  vsnprintf(line + n, sizeof line - (size_t)n, format, args);
  va_end(args);
  if (copy.message_fn) {
    copy.message_fn(line, copy.message_arg);
  } else {
    size_t length = strlen(line);
    line[length] = '\n';
    prim_write_error(line, length + 1);
  }
}

/* Addresses are printed as 0x<hex> on every platform (the C library's %p
 * differs: Windows prints zero-padded hex without 0x). */
#define ADDRESS_FORMAT "0x%" PRIxPTR

static void diagnose(enum api_op op, const void *p, const char *what, bool fatal) {
  message("%s(" ADDRESS_FORMAT "): %s%s", op_name(op), (uintptr_t)p, what,
          fatal ? "; aborting" : "");
  if (fatal) abort();
}

/* Count a foreign pointer and apply the policy. Returns true to forward it. */
static bool foreign_pointer(enum api_op op, const void *p, const char *report_outcome) {
  copy_init();
  atomic_fetch_add(&copy.foreign, 1);
  switch (copy.options[NSALLOC_OPTION_FOREIGN_POLICY]) {
  case NSALLOC_POLICY_FORWARD:
    atomic_fetch_add(&copy.forwarded, 1);
    return true;
  case NSALLOC_POLICY_REPORT:
    message("%s(" ADDRESS_FORMAT "): pointer not owned by this copy (foreign); %s", op_name(op),
            (uintptr_t)p, report_outcome);
    return false;
  default:
    diagnose(op, p, "pointer not owned by this copy (foreign)", true);
    return false;
  }
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
  diagnose(op, p, what, copy.options[NSALLOC_OPTION_FOREIGN_POLICY] != NSALLOC_POLICY_REPORT);
}

int nsalloc_set_foreign_policy(nsalloc_policy_t policy, const nsalloc_forward_t *forward) {
  copy_init();
  if (policy == NSALLOC_POLICY_FORWARD) {
    if (!forward || !forward->free || !forward->realloc) return EINVAL;
    copy.forward = *forward;
  } else if (policy != NSALLOC_POLICY_ABORT && policy != NSALLOC_POLICY_REPORT) {
    return EINVAL;
  }
  copy.options[NSALLOC_OPTION_FOREIGN_POLICY] = policy;
  return 0;
}

void nsalloc_set_message_handler(nsalloc_message_fn handler, void *arg) {
  copy.message_arg = arg;
  copy.message_fn = handler;
}
