/*
 * sdk: the host side of the SDK line protocol (docs/sdk.md). A guest
 * program's SDK writes one protocol line per write(2) to /dev/rewind; the
 * kernel stores it as a mark record; this module recognises such a payload
 * and parses it into a typed line. Everything it reads is untrusted guest
 * output: a payload that is not a well-formed line of a known version and
 * verb is not an SDK line (it stays a plain mark).
 *
 * Invariants:
 *  1. sdk_parse never reads past len bytes and never writes past the
 *     fixed buffers of struct sdk_line; file and msg are NUL-terminated.
 *  2. sdk_parse accepts exactly the grammar of docs/sdk.md: the "rw1 "
 *     prefix, a known verb with exactly its fields, single spaces, escapes
 *     %XX of two hex digits, decoded bytes other than NUL, decoded lengths
 *     within SDK_FILE_MAX / SDK_MSG_MAX, an optional final newline.
 */
#ifndef REWIND_TRACE_SDK_H
#define REWIND_TRACE_SDK_H

#include <stddef.h>
#include <stdint.h>

#include "rewind.h"

#define SDK_PREFIX "rw1 "
#define SDK_LINE_MAX 4000 /* bytes of one line, newline included */
#define SDK_FILE_MAX 255  /* decoded bytes */
#define SDK_MSG_MAX 1023  /* decoded bytes */

enum sdk_verb {
    SDK_CATALOG = 1, /* "cat KIND FILE LINE MSG": an assertion exists */
    SDK_HIT,         /* "hit KIND RESULT FILE LINE MSG": one evaluation */
    SDK_POINT,       /* "point FILE LINE": a schedule point */
};

struct sdk_line {
    enum sdk_verb verb;
    enum rw_sdk_kind kind; /* catalog and hit */
    int result;            /* hit: 1 if the condition was true */
    unsigned line;
    char file[SDK_FILE_MAX + 1];
    char msg[SDK_MSG_MAX + 1];
};

/* Parse a mark payload. Returns 0 with *out filled, or -1 if it is not an
 * SDK line (then *out is unspecified). */
int sdk_parse(const uint8_t *p, size_t len, struct sdk_line *out);

/* The kind named by the protocol word (the first len bytes of w), or -1. */
int sdk_kind_from_word(const char *w, size_t len);

/* The kind a trace record is shown as: REWIND_REC_ASSERT for a mark record
 * whose payload is an SDK line, else kind itself. */
unsigned sdk_record_kind(unsigned kind, const uint8_t *p, size_t len);

/* One line of words: "assert pid 5/6: always \"x > 0\" held at a.c:12". */
void sdk_describe(const struct sdk_line *l, uint32_t pid, uint32_t tid, char *out, size_t n);

#endif
