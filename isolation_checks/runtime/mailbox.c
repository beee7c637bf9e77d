/*
 * mailbox.c - a ring buffer under a mutex.
 */
#include "mailbox.h"

void iso_mailbox_init(iso_mailbox *box) {
  pthread_mutex_init(&box->lock, NULL);
  box->head = box->count = 0;
}

void iso_mailbox_destroy(iso_mailbox *box) {
  pthread_mutex_destroy(&box->lock);
}

bool iso_mailbox_push(iso_mailbox *box, const iso_block *block) {
  pthread_mutex_lock(&box->lock);
  bool room = box->count < ISO_MAILBOX_CAPACITY;
  if (room) box->items[(box->head + box->count++) % ISO_MAILBOX_CAPACITY] = *block;
  pthread_mutex_unlock(&box->lock);
  return room;
}

bool iso_mailbox_pop(iso_mailbox *box, iso_block *out) {
  pthread_mutex_lock(&box->lock);
  bool found = box->count > 0;
  if (found) {
    *out = box->items[box->head];
    box->head = (box->head + 1) % ISO_MAILBOX_CAPACITY;
    box->count--;
  }
  pthread_mutex_unlock(&box->lock);
  return found;
}
