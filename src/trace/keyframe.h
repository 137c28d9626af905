/*
 * keyframe: the keyframes file of a run (runs/<id>/keyframes) and the page
 * maps it describes. The pages themselves live in the page store; this file
 * holds, per keyframe, the machine state (a struct snap blob) and the pages
 * that changed since the previous keyframe, named by hash.
 *
 * Format (version 1), little-endian:
 *   header  "RWKEYF1\0" | u32 version | u32 header size (64) |
 *           parent id (32 bytes, NUL padded; empty: no parent) |
 *           u64 parent_upto: the parent's keyframes at steps <= this come
 *           first in this run's chain | u64 reserved
 *   record  u32 magic "KFRM" | u32 npages | u64 step | u32 state_len |
 *           u32 crc32 (of the record with this field 0) |
 *           state (state_len bytes, padded to 8) |
 *           npages x (u64 pfn | 32-byte SHA-256)  (the zero page's hash
 *           means the page became zero)
 * Keyframe steps strictly increase. A record is appended whole and flushed
 * only after its pages are in the store; a crash leaves at most a torn last
 * record, which the reader detects (short, bad magic or bad crc) and stops
 * before. The reader bounds every length by the file size.
 *
 * A chain is the parent's chain up to parent_upto followed by this file's
 * records; the page map at keyframe i is the union of the deltas of the
 * chain up to i, later entries winning.
 */
#ifndef REWIND_TRACE_KEYFRAME_H
#define REWIND_TRACE_KEYFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/hash.h"

#define KF_MAGIC "RWKEYF1"
#define KF_VERSION 1
#define KF_HEADER_SIZE 64
#define KF_REC_MAGIC 0x4d52464bu /* "KFRM" */
#define KF_MAX_CHAIN 64          /* fork depth limit */

struct kf_page {
    uint64_t pfn;
    hash256 hash;
};

struct kf_writer {
    FILE *f;
    uint64_t count, last_step, bytes;
    int failed;
};

/* Create path with a header naming parent (NULL or "" for none). 0 or -1. */
int kf_create(struct kf_writer *w, const char *path, const char *parent, uint64_t parent_upto);
/* Append one keyframe (pages already in the store) and flush it. 0 or -1. */
int kf_append(struct kf_writer *w, uint64_t step, const void *state, uint32_t state_len,
              const struct kf_page *pages, uint32_t npages);
/* fsync and close. 0 or -1. */
int kf_close(struct kf_writer *w);

struct kf_entry {
    uint64_t step;
    uint64_t offset; /* of the record in the file */
    uint32_t state_len, npages;
};

struct kf_file {
    char parent[33];
    uint64_t parent_upto;
    struct kf_entry *e;
    size_t n;
    int torn;    /* reading stopped at a torn or corrupt record */
    int damaged; /* ... that does not look like a crash's torn tail (keyframe.c inv. 3) */
    FILE *f;
};

/* Open and index path. Returns 0, -1 (errno; ENOMEM: the index could not
 * be built whole) or -2 if not a keyframes file of a supported version. */
int kf_open(const char *path, struct kf_file *k);
void kf_close_read(struct kf_file *k);
/* Read keyframe i's state into a malloc'd buffer (*len bytes). 0 or -1. */
int kf_read_state(struct kf_file *k, size_t i, void **state, uint32_t *len);
/* Read keyframe i's pages into a malloc'd array. 0 or -1. */
int kf_read_pages(struct kf_file *k, size_t i, struct kf_page **pages);

/* A run's keyframe chain, resolved through its parents. */
struct kf_link {
    char run[64]; /* run directory name */
    struct kf_file file;
    size_t count; /* how many of file's keyframes belong to the chain */
};
struct kf_chain {
    struct kf_link link[KF_MAX_CHAIN]; /* root ancestor first */
    size_t nlinks;
};

/* Load the chain of run directory name under home/runs. Returns 0, or -1 with
 * one line in err (a missing keyframes file is an error: "no keyframes"). */
int kf_chain_load(const char *home, const char *name, struct kf_chain *c, char *err, size_t errlen);
void kf_chain_free(struct kf_chain *c);
/* The last keyframe at or before step: its link and index. 0, or -1 if the
 * chain has none. */
int kf_chain_find(const struct kf_chain *c, uint64_t step, size_t *link, size_t *idx);
/* Fill map (npfn hashes, zero hash for never-written) with the page map at
 * (link, idx). Pages beyond npfn are an error (corrupt). 0 or -1 + err. */
int kf_chain_map(const struct kf_chain *c, size_t link, size_t idx, hash256 *map, uint64_t npfn,
                 char *err, size_t errlen);
/* Call fn for every page hash referenced by the file at path (no chain).
 * 0, or -1 (unreadable, or damaged: errno EILSEQ; fn may have been called). */
int kf_each_page(const char *path, void (*fn)(void *ctx, const hash256 *h), void *ctx);

#endif
