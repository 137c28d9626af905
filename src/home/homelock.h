/*
 * homelock: one advisory lock per $REWIND_HOME (the file gc.lock in it) that
 * keeps `rewind gc` away from pages and images still being written or read.
 *
 * Everything that writes pages, keyframes or images, or reads a run to export
 * or import it, holds the lock shared for its whole life; gc holds it
 * exclusive while it computes the live set and deletes. So gc never runs
 * while a run is capturing: the pages it has put but not yet named in a
 * keyframes file cannot be taken for dead. The lock is flock(2) on an fd with
 * O_CLOEXEC: it goes away with the process (kill -9 included), never stale.
 * A child made by fork() shares the lock until it exits or closes the fd.
 */
#ifndef REWIND_HOME_HOMELOCK_H
#define REWIND_HOME_HOMELOCK_H

#include <stddef.h>

/* Take the lock of home (created, with home, if missing): shared (exclusive
 * 0) or exclusive. If another process holds it in a conflicting mode: with
 * wait, print one line on stderr saying what we wait for, then block; without,
 * fail (errno EWOULDBLOCK). Returns the fd holding the lock (release with
 * homelock_release), or -1 with one line in err. */
int homelock_take(const char *home, int exclusive, int wait, char *err, size_t errlen);

/* Release a lock taken by homelock_take (fd < 0 is fine). */
void homelock_release(int fd);

/* How many processes hold a lock on the same file as fd, from /proc/locks
 * (waiters not counted). Returns the count, or -1 if it cannot tell. */
int homelock_holders(int fd);

#endif
