/*
 * fuzz.h - shared helpers of the libFuzzer targets (tests/fuzz/README.md).
 *
 * Every target gets one private scratch directory, made once per process
 * under $RWFUZZ_TMP, else /dev/shm when it exists (a tmpfs: the fsyncs of
 * the code under test cost nothing there, on a disk they cap a target at
 * ~20 inputs per second), else /tmp; it empties what it wrote between
 * inputs and is removed at exit.
 *
 * Invariants:
 *  1. A target never writes outside its scratch directory.
 *  2. Each input starts from the same state: what an input wrote is removed
 *     before the next one runs (fuzz_clear), so a crash reproduces from the
 *     input alone.
 */
#ifndef REWIND_TESTS_FUZZ_H
#define REWIND_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "home/rundir.h"
#include "util/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir_path[256];

static void fuzz_cleanup(void)
{
    rundir_remove_tree(fuzz_dir_path);
}

/* The scratch directory of this process (created on first use). */
static inline const char *fuzz_dir(void)
{
    char *dir = fuzz_dir_path;
    if (!dir[0]) {
        const char *t = getenv("RWFUZZ_TMP");
        if (!t || !*t)
            t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof(fuzz_dir_path), "%s/rwfuzz.XXXXXX", t);
        if (!mkdtemp(dir))
            abort();
        atexit(fuzz_cleanup);
    }
    return dir;
}

/* dir/rel, into out (n bytes). */
static inline const char *fuzz_path(char *out, size_t n, const char *rel)
{
    snprintf(out, n, "%s/%s", fuzz_dir(), rel);
    return out;
}

/* Write n bytes of p to path (created, truncated); aborts on failure, which
 * is the harness's, not the code under test's. */
static inline void fuzz_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        abort();
}

/* The scratch home (into home, hn bytes) with its run directory runs/r
 * made; the path of runs/r/file into out (n bytes), written with the n
 * bytes of p unless p is NULL. */
static inline const char *fuzz_run_file(char *home, size_t hn, const char *file, const void *p,
                                        size_t len, char *out, size_t n)
{
    fuzz_path(home, hn, "home");
    snprintf(out, n, "%s/runs/r", home);
    io_mkdir_p(out);
    snprintf(out, n, "%s/runs/r/%s", home, file);
    if (p)
        fuzz_write(out, p, len);
    return out;
}

/* Remove rel under the scratch directory (a file or a tree). */
static inline void fuzz_clear(const char *rel)
{
    char p[512];
    fuzz_path(p, sizeof(p), rel);
    if (unlink(p) != 0)
        rundir_remove_tree(p);
}

/* Reads little-endian integers off the front of an input; past the end
 * everything reads as zero. */
struct fuzz_in {
    const uint8_t *p;
    size_t n;
};

static inline uint64_t fuzz_take(struct fuzz_in *in, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) {
        uint8_t b = 0;
        if (in->n) {
            b = *in->p++;
            in->n--;
        }
        v |= (uint64_t)b << (8 * i);
    }
    return v;
}

#endif
