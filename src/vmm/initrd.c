/*
 * initrd: see initrd.h. Format: Documentation/driver-api/early-userspace/
 * buffer-format.rst ("070701" header of 13 eight-digit hex fields, name and
 * data each padded to 4 bytes, "TRAILER!!!" last).
 */

#include "vmm/initrd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/io.h"

/* A host file put into the initrd: its size must fit the header's 32-bit
 * field, and it lands in guest RAM, so 1 GiB is far more than enough. */
#define INITRD_FILE_MAX (1u << 30)

static int reserve(struct initrd *c, size_t more)
{
    if (c->size + more <= c->cap)
        return 0;
    size_t cap = c->cap ? c->cap : 65536;
    while (cap < c->size + more)
        cap *= 2;
    uint8_t *d = realloc(c->data, cap);
    if (!d)
        return -1;
    c->data = d;
    c->cap = cap;
    return 0;
}

static void pad4(struct initrd *c)
{
    while (c->size % 4)
        c->data[c->size++] = 0;
}

static int add(struct initrd *c, const char *name, uint32_t mode, const void *data, size_t len)
{
    size_t nlen = strlen(name) + 1;
    if (reserve(c, 110 + nlen + 4 + len + 4) < 0)
        return -1;
    char hdr[111];
    snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
             ++c->ino, mode, 0u, 0u, 1u, 0u, (unsigned)len, 0u, 0u, 0u, 0u, (unsigned)nlen, 0u);
    memcpy(c->data + c->size, hdr, 110);
    c->size += 110;
    memcpy(c->data + c->size, name, nlen);
    c->size += nlen;
    pad4(c);
    if (len)
        memcpy(c->data + c->size, data, len);
    c->size += len;
    pad4(c);
    return 0;
}

int initrd_add_dir(struct initrd *c, const char *name, uint32_t mode)
{
    return add(c, name, S_IFDIR | (mode & 07777), NULL, 0);
}

int initrd_add_file(struct initrd *c, const char *name, uint32_t mode, const void *data, size_t len)
{
    return add(c, name, S_IFREG | (mode & 07777), data, len);
}

int initrd_add_host_file(struct initrd *c, const char *name, uint32_t mode, const char *path)
{
    size_t len;
    char *buf = io_read_file(path, INITRD_FILE_MAX, &len);
    if (!buf)
        return -1;
    int rc = initrd_add_file(c, name, mode, buf, len);
    free(buf);
    return rc;
}

int initrd_finish(struct initrd *c)
{
    return add(c, "TRAILER!!!", 0, NULL, 0);
}

void initrd_free(struct initrd *c)
{
    free(c->data);
    memset(c, 0, sizeof(*c));
}
