/*
 * patch: see patch.h.
 */
#include "input/patch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/check.h"
#include "util/fail.h"

#define PATCH_ID_MAX 4194304 /* the guest kernel's PID_MAX_LIMIT */
#define NREGS 18

int rw_patch_fits(const struct rw_patch *p, size_t n)
{
    return p->n < RW_PATCH_OPS_MAX && n <= RW_PATCH_BYTES_MAX - p->nbytes;
}

int rw_patch_mem(struct rw_patch *p, uint32_t pid, uint64_t addr, const void *buf, size_t n)
{
    if (n == 0 || !rw_patch_fits(p, n))
        return -1;
    struct rw_patch_op *o = &p->op[p->n++];
    memset(o, 0, sizeof(*o));
    o->id = pid;
    o->addr = addr;
    o->off = p->nbytes;
    o->len = (uint32_t)n;
    memmove(p->bytes + p->nbytes, buf, n); /* buf may be that place (patch_from_json) */
    p->nbytes += (uint32_t)n;
    return 0;
}

int rw_patch_regs(struct rw_patch *p, uint32_t tid, const struct rw_regs *r)
{
    if (!rw_patch_fits(p, 0))
        return -1;
    struct rw_patch_op *o = &p->op[p->n++];
    memset(o, 0, sizeof(*o));
    o->regs = 1;
    o->id = tid;
    o->r = *r;
    return 0;
}

static uint64_t *reg_at(struct rw_regs *r, int i)
{
    uint64_t *order[NREGS] = {&r->rax, &r->rbx, &r->rcx, &r->rdx, &r->rsi, &r->rdi,
                              &r->rsp, &r->rbp, &r->r8,  &r->r9,  &r->r10, &r->r11,
                              &r->r12, &r->r13, &r->r14, &r->r15, &r->rip, &r->rflags};
    return order[i];
}

static char *hex_of(const uint8_t *b, size_t n)
{
    char *s = malloc(2 * n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        snprintf(s + 2 * i, 3, "%02x", b[i]);
    s[2 * n] = 0;
    return s;
}

json_t *patch_to_json(const struct rw_patch *p)
{
    json_t *ops = json_array();
    for (unsigned i = 0; i < p->n; i++) {
        const struct rw_patch_op *o = &p->op[i];
        json_t *e = json_array();
        json_array_append_new(e, json_string(o->regs ? "regs" : "mem"));
        json_array_append_new(e, json_integer((json_int_t)o->id));
        char *hex;
        if (o->regs) {
            uint8_t b[NREGS * 8];
            struct rw_regs r = o->r;
            for (int k = 0; k < NREGS; k++)
                for (int j = 0; j < 8; j++)
                    b[8 * k + j] = (uint8_t)(*reg_at(&r, k) >> (8 * j));
            hex = hex_of(b, sizeof(b));
        } else {
            char a[17];
            snprintf(a, sizeof(a), "%" PRIx64, o->addr);
            json_array_append_new(e, json_string(a));
            hex = hex_of(p->bytes + o->off, o->len);
        }
        json_array_append_new(e, json_string(hex ? hex : ""));
        free(hex);
        json_array_append_new(ops, e);
    }
    json_t *v = json_object();
    json_object_set_new(v, "at", json_integer((json_int_t)p->at));
    json_object_set_new(v, "ops", ops);
    return v;
}

/* Lowercase hex of exactly n bytes into b. 0 or -1. */
static int unhex(const char *s, uint8_t *b, size_t n)
{
    if (!s || strlen(s) != 2 * n)
        return -1;
    for (size_t i = 0; i < 2 * n; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        b[i / 2] = (uint8_t)(i % 2 ? (b[i / 2] << 4) | v : v);
    }
    return 0;
}

static int parse_op(json_t *e, struct rw_patch *p)
{
    const char *kind = json_string_value(json_array_get(e, 0));
    json_t *id = json_array_get(e, 1);
    if (!kind || !json_is_integer(id) || json_integer_value(id) < 1 ||
        json_integer_value(id) > PATCH_ID_MAX)
        return -1;
    uint32_t tid = (uint32_t)json_integer_value(id);
    if (!strcmp(kind, "regs") && json_array_size(e) == 3) {
        uint8_t b[NREGS * 8];
        struct rw_regs r;
        if (unhex(json_string_value(json_array_get(e, 2)), b, sizeof(b)) < 0)
            return -1;
        for (int k = 0; k < NREGS; k++) {
            uint64_t v = 0;
            for (int j = 7; j >= 0; j--)
                v = v << 8 | b[8 * k + j];
            *reg_at(&r, k) = v;
        }
        return rw_patch_regs(p, tid, &r);
    }
    if (strcmp(kind, "mem") || json_array_size(e) != 4)
        return -1;
    const char *a = json_string_value(json_array_get(e, 2));
    const char *h = json_string_value(json_array_get(e, 3));
    char *end;
    if (!a || !*a || strlen(a) > 16 || !h)
        return -1;
    uint64_t addr = strtoull(a, &end, 16);
    size_t n = strlen(h) / 2;
    if (*end || n == 0 || !rw_patch_fits(p, n) || unhex(h, p->bytes + p->nbytes, n) < 0)
        return -1;
    return rw_patch_mem(p, tid, addr, p->bytes + p->nbytes, n);
}

int patch_from_json(json_t *v, struct rw_patch **out, char *why, size_t n)
{
    *out = NULL;
    if (!v)
        return 0;
    json_t *at = json_object_get(v, "at"), *ops = json_object_get(v, "ops");
    if (!json_is_object(v) || json_object_size(v) != 2 || !json_is_integer(at) ||
        json_integer_value(at) < 1 || !json_is_array(ops) || json_array_size(ops) == 0 ||
        json_array_size(ops) > RW_PATCH_OPS_MAX)
        return util_fail(why, n, "the run's spec has malformed gdb_writes");
    struct rw_patch *p = calloc(1, sizeof(*p));
    if (!p)
        return util_fail(why, n, "out of memory");
    p->at = (uint64_t)json_integer_value(at);
    size_t i;
    json_t *e;
    json_array_foreach(ops, i, e)
    {
        if (!json_is_array(e) || parse_op(e, p) < 0) {
            free(p);
            return util_fail(why, n, "the run's spec has a malformed gdb write (%zu)", i + 1);
        }
    }
    /* Invariant 4: only the canonical text (the id is its hash). */
    json_t *back = patch_to_json(p);
    int same = json_equal(back, v);
    json_decref(back);
    if (!same) {
        free(p);
        return util_fail(why, n, "the run's spec has gdb_writes not in canonical form");
    }
    *out = p;
    return 0;
}

int patch_hole(void)
{
    const char *holes = getenv("REWIND_TEST_HOLES"), *h = getenv("REWIND_TEST_HOLE_NO_PATCH");
    return holes && h && !strcmp(holes, "1") && !strcmp(h, "1");
}
