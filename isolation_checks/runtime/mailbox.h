/*
 * mailbox.h - a bounded, locked queue of patterned blocks that threads hand
 * to each other (so a block is freed or grown by another thread than the one
 * that allocated it).
 */
#ifndef ISO_MAILBOX_H
#define ISO_MAILBOX_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct iso_block {
  void *p;
  size_t size;
  uint64_t seed; /* of its pattern (pattern.h) */
  uint32_t copy; /* index of the copy that allocated it */
} iso_block;

#define ISO_MAILBOX_CAPACITY 512

typedef struct iso_mailbox {
  pthread_mutex_t lock;
  size_t head, count;
  iso_block items[ISO_MAILBOX_CAPACITY];
} iso_mailbox;

void iso_mailbox_init(iso_mailbox *box);
void iso_mailbox_destroy(iso_mailbox *box);
/* False when the mailbox is full. */
bool iso_mailbox_push(iso_mailbox *box, const iso_block *block);
/* False when the mailbox is empty. */
bool iso_mailbox_pop(iso_mailbox *box, iso_block *out);

#endif
