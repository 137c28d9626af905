/*
 * rewind.h: the in-guest SDK for programs that run inside a rewind VM.
 * Header-only, C99, no dependencies beyond libc. Outside rewind (no
 * /dev/rewind) every call is a harmless no-op.
 *
 *   rewind_mark("reached phase 2");   one mark event in the run's trace
 */
#ifndef REWIND_SDK_H
#define REWIND_SDK_H

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static inline int rewind_sdk_fd(void)
{
    static int fd = -2;
    if (fd == -2)
        fd = open("/dev/rewind", O_WRONLY | O_CLOEXEC);
    return fd;
}

/* Emit one mark (a line of text) into the run's trace. Returns 0 or -1. */
static inline int rewind_mark(const char *text)
{
    int fd = rewind_sdk_fd();
    if (fd < 0)
        return -1;
    return write(fd, text, strlen(text)) < 0 ? -1 : 0;
}

#endif
