/*
 * sdk: see sdk.h. The grammar is docs/sdk.md; the parser walks the payload
 * once, field by field, with every index checked against len.
 */
#include "trace/sdk.h"

#include <stdio.h>
#include <string.h>

#include "trace/trace.h"
#include "util/check.h"

static const char *const kind_words[] = {
    [RW_SDK_ALWAYS] = "always",           [RW_SDK_ALWAYS_OR_UNREACHABLE] = "always_or_unreachable",
    [RW_SDK_SOMETIMES] = "sometimes",     [RW_SDK_REACHABLE] = "reachable",
    [RW_SDK_UNREACHABLE] = "unreachable",
};
#define NKINDS (sizeof(kind_words) / sizeof(kind_words[0]))

const char *rw_sdk_kind_name(enum rw_sdk_kind k)
{
    return (unsigned)k < NKINDS ? kind_words[k] : "?";
}

int sdk_kind_from_word(const char *w, size_t len)
{
    for (unsigned k = 0; k < NKINDS; k++)
        if (strlen(kind_words[k]) == len && !memcmp(kind_words[k], w, len))
            return (int)k;
    return -1;
}

/* A cursor over the payload: fields are separated by exactly one space. */
struct cur {
    const uint8_t *p;
    size_t len, at;
};

/* The next field [*start, *start + *n); 0, or -1 at the end of the line. */
static int field(struct cur *c, size_t *start, size_t *n)
{
    if (c->at > c->len)
        return -1;
    size_t i = c->at;
    while (i < c->len && c->p[i] != ' ')
        i++;
    *start = c->at;
    *n = i - c->at;
    c->at = i + 1; /* past the space, or past the end (then the next field fails) */
    return 0;
}

static int hexval(uint8_t h)
{
    if (h >= '0' && h <= '9')
        return h - '0';
    if (h >= 'A' && h <= 'F')
        return h - 'A' + 10;
    if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
    return -1;
}

/* Decode an escaped field into out (cap bytes + NUL). */
static int unescape(const uint8_t *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned b = s[i];
        if (b <= ' ' || b == 0x7f)
            return -1; /* must have been escaped */
        if (b == '%') {
            if (i + 2 >= n)
                return -1; /* needs two hex digits */
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            b = (unsigned)(hi << 4 | lo);
            if (b == 0)
                return -1;
            i += 2;
        }
        if (o >= cap)
            return -1;
        out[o++] = (char)b;
    }
    RW_ASSERT(o <= cap);
    out[o] = 0;
    return 0;
}

static int number(const uint8_t *s, size_t n, unsigned *out)
{
    if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > 0xffffffffull)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int is_word(const uint8_t *s, size_t n, const char *w)
{
    return strlen(w) == n && !memcmp(s, w, n);
}

int sdk_parse(const uint8_t *p, size_t len, struct sdk_line *out)
{
    size_t plen = strlen(SDK_PREFIX);
    if (!p || len < plen || len > SDK_LINE_MAX || memcmp(p, SDK_PREFIX, plen))
        return -1;
    if (p[len - 1] == '\n')
        len--;
    struct cur c = {p, len, plen};
    size_t s[6], n[6];
    if (field(&c, &s[0], &n[0]) < 0)
        return -1;
    const uint8_t *verb = p + s[0];
    unsigned nf; /* fields after the verb */
    memset(out, 0, sizeof(*out));
    if (is_word(verb, n[0], "cat")) {
        out->verb = SDK_CATALOG;
        nf = 4;
    } else if (is_word(verb, n[0], "hit")) {
        out->verb = SDK_HIT;
        nf = 5;
    } else if (is_word(verb, n[0], "point")) {
        out->verb = SDK_POINT;
        nf = 2;
    } else {
        return -1;
    }
    for (unsigned i = 1; i <= nf; i++)
        if (field(&c, &s[i], &n[i]) < 0)
            return -1;
    if (c.at <= c.len)
        return -1; /* more fields than the verb has */
    unsigned i = 1;
    if (out->verb != SDK_POINT) {
        int k = sdk_kind_from_word((const char *)p + s[i], n[i]);
        if (k < 0)
            return -1;
        out->kind = (enum rw_sdk_kind)k;
        i++;
    }
    if (out->verb == SDK_HIT) {
        if (n[i] != 1 || (p[s[i]] != '0' && p[s[i]] != '1'))
            return -1;
        out->result = p[s[i]] == '1';
        i++;
    }
    if (unescape(p + s[i], n[i], out->file, SDK_FILE_MAX) < 0)
        return -1;
    i++;
    if (number(p + s[i], n[i], &out->line) < 0)
        return -1;
    i++;
    if (out->verb != SDK_POINT && unescape(p + s[i], n[i], out->msg, SDK_MSG_MAX) < 0)
        return -1;
    return 0;
}

unsigned sdk_record_kind(unsigned kind, const uint8_t *p, size_t len)
{
    struct sdk_line l;
    if (kind == REWIND_REC_MARK && sdk_parse(p, len, &l) == 0)
        return REWIND_REC_ASSERT;
    return kind;
}

/* Quote text for one line of words: printable ASCII as is, the rest \xNN. */
static void quote(const char *t, char *out, size_t n, size_t max)
{
    size_t o = 0, i = 0;
    for (; t[i] && i < max && o + 5 < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, n - o, "\\%c", c);
        else if (c < 32 || c > 126)
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    if (t[i] && o + 4 < n)
        o += (size_t)snprintf(out + o, n - o, "...");
    out[o < n ? o : n - 1] = 0;
}

void sdk_describe(const struct sdk_line *l, uint32_t pid, uint32_t tid, char *out, size_t n)
{
    char msg[512], file[300];
    quote(l->msg, msg, sizeof(msg), 120);
    quote(l->file, file, sizeof(file), 120);
    const char *k = rw_sdk_kind_name(l->kind);
    switch (l->verb) {
    case SDK_CATALOG:
        snprintf(out, n, "assert pid %u/%u: catalog: %s \"%s\" at %s:%u", pid, tid, k, msg, file,
                 l->line);
        break;
    case SDK_HIT: {
        const char *how;
        if (l->kind == RW_SDK_REACHABLE)
            how = "reached";
        else if (l->kind == RW_SDK_UNREACHABLE)
            how = "reached: FAILED";
        else if (l->kind == RW_SDK_SOMETIMES)
            how = l->result ? "true" : "false";
        else
            how = l->result ? "held" : "FAILED";
        snprintf(out, n, "assert pid %u/%u: %s \"%s\" %s at %s:%u", pid, tid, k, msg, how, file,
                 l->line);
        break;
    }
    case SDK_POINT:
        snprintf(out, n, "assert pid %u/%u: schedule point at %s:%u", pid, tid, file, l->line);
        break;
    default:
        snprintf(out, n, "assert pid %u/%u", pid, tid);
        break;
    }
}
