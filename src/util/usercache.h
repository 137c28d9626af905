/* usercache: a directory of the user's cache shared by every home (usercache.c). */
#ifndef REWIND_UTIL_USERCACHE_H
#define REWIND_UTIL_USERCACHE_H

#include <stddef.h>

/* Open (making it if needed, mode 0700) the directory sub of the user's
 * cache: $REWIND_CACHE/sub, else $XDG_CACHE_HOME/rewind/sub, else
 * $HOME/.cache/rewind/sub. Returns its descriptor (the caller closes it) and
 * puts "/proc/self/fd/N" in path, the name to use it by while the
 * descriptor is open; or -1 when there is none to trust (not the user's,
 * writable by others, a link, or no such place). */
int usercache_open(const char *sub, char *path, size_t pathlen);

#endif
