/*
 * process.h - auditing what a running process has mapped (Linux).
 *
 * /proc/PID/maps lists every file mapped into the process: its executable,
 * the shared libraries the loader brought in and every module it dlopen()ed
 * since (NIFs, Python extensions, Lua modules). Each file is audited once,
 * in path order, as a directory walk would meet it (files holding no ELF,
 * such as the locale archive, are passed over and counted), under the name
 * the process knows it by. A file is read through /proc/PID/map_files/START-END, the
 * very file mapped, even one deleted since ("/tmp/m.so (deleted)") or
 * replaced on disk; where that is not permitted (it needs CAP_SYS_ADMIN)
 * the path is opened instead, and refused unless it is still the inode that
 * was mapped. Mapped devices (a GPU's, /dev/zero) are never opened: they
 * are counted with the FIFOs, sockets and devices a walk passes over.
 */
#ifndef AUDIT_PROCESS_H
#define AUDIT_PROCESS_H

#include "inputs.h"

/* Audits the files process pid has mapped into inputs->set. A process that
 * is gone or whose maps cannot be read is an error naming it. */
void process_audit(inputs_t *inputs, long pid);

#endif
