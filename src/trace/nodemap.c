/* nodemap: see nodemap.h. */

#include "trace/nodemap.h"

#include <stdlib.h>
#include <string.h>

#include "input/nodes.h"
#include "trace/trace.h"
#include "util/check.h"

void nodemap_init(struct nodemap *m)
{
    memset(m, 0, sizeof(*m));
}

void nodemap_free(struct nodemap *m)
{
    free(m->pid);
    free(m->node);
    nodemap_init(m);
}

static size_t slot(const struct nodemap *m, uint32_t pid)
{
    /* the product's high bits: pids that differ only above the table's
     * size do not share a slot (a forged trace cannot make it quadratic) */
    unsigned bits = 0;
    while ((size_t)1 << bits < m->cap)
        bits++;
    size_t s = (size_t)(((uint64_t)pid * 0x9e3779b97f4a7c15ull) >> (64 - bits));
    while (m->pid[s] && m->pid[s] != pid)
        s = (s + 1) & (m->cap - 1);
    return s;
}

static int get(const struct nodemap *m, uint32_t pid)
{
    if (!m->cap || !pid)
        return 0;
    size_t s = slot(m, pid);
    return m->pid[s] ? m->node[s] : 0;
}

static int grow(struct nodemap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint32_t *np = calloc(cap, sizeof(*np));
    uint8_t *nn = calloc(cap, 1);
    if (!np || !nn) {
        free(np);
        free(nn);
        return -1;
    }
    struct nodemap old = *m;
    m->pid = np;
    m->node = nn;
    m->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.pid[i]) {
            size_t s = slot(m, old.pid[i]);
            m->pid[s] = old.pid[i];
            m->node[s] = old.node[i];
        }
    free(old.pid);
    free(old.node);
    return 0;
}

static void set(struct nodemap *m, uint32_t pid, int node)
{
    if (!pid || pid > REWIND_TID_MAX || m->oom)
        return;
    if ((m->n + 1) * 2 > m->cap && grow(m) < 0) {
        m->oom = 1;
        return;
    }
    size_t s = slot(m, pid);
    if (!m->pid[s]) {
        m->pid[s] = pid;
        m->n++;
    }
    m->node[s] = (uint8_t)node;
}

/* "NAME PID" from rewind-init (guest/init/nodes.c invariant 4): the name's
 * length in *nl and the pid, or 0 when malformed (invariant 3). */
static uint32_t name_pid(const uint8_t *p, size_t len, size_t *nl)
{
    const uint8_t *sp = p && len ? memchr(p, ' ', len) : NULL;
    *nl = sp ? (size_t)(sp - p) : 0;
    /* a name the spec allows: a trace is untrusted, its names reach terminals and JSON */
    if (!nodes_name_ok((const char *)p, *nl))
        return 0;
    uint64_t pid = 0;
    size_t i = *nl + 1;
    for (; i < len && p[i] >= '0' && p[i] <= '9' && pid < UINT32_MAX; i++)
        pid = pid * 10 + (uint64_t)(p[i] - '0');
    if (i != len || i == *nl + 1 || !pid || pid > REWIND_TID_MAX)
        return 0;
    return (uint32_t)pid;
}

static void node_start(struct nodemap *m, const uint8_t *p, size_t len)
{
    size_t nl;
    uint32_t pid = name_pid(p, len, &nl);
    if (!pid || m->count >= NODEMAP_MAX)
        return;
    memcpy(m->names[m->count], p, nl);
    m->names[m->count][nl] = 0;
    m->count++;
    set(m, pid, m->count);
}

/* A restarted node's new leader (invariant 4). */
static void node_restart(struct nodemap *m, const uint8_t *p, size_t len)
{
    size_t nl;
    uint32_t pid = name_pid(p, len, &nl);
    for (int k = 0; pid && k < m->count; k++)
        if (strlen(m->names[k]) == nl && !memcmp(m->names[k], p, nl)) {
            set(m, pid, k + 1);
            return;
        }
}

void nodemap_feed(struct nodemap *m, unsigned kind, unsigned flags, uint32_t pid, uint64_t aux,
                  const uint8_t *payload, size_t len)
{
    if (kind == REWIND_REC_INIT && aux == REWIND_INIT_NODE_START && pid == 1) {
        node_start(m, payload, len);
        return;
    }
    if (kind == REWIND_REC_INIT && aux == REWIND_INIT_NODE_RESTART && pid == 1) {
        node_restart(m, payload, len);
        return;
    }
    if (!m->count || kind != REWIND_REC_FORK || (flags & 1) || aux > REWIND_TID_MAX)
        return; /* invariant 1: nothing before the first node */
    int n = get(m, pid);
    if (n || get(m, (uint32_t)aux)) /* invariant 2 */
        set(m, (uint32_t)aux, n);
}

const char *nodemap_of(const struct nodemap *m, uint32_t pid)
{
    int n = get(m, pid);
    RW_ASSERT(n <= m->count);
    return n ? m->names[n - 1] : NULL;
}

const char *nodemap_name(const struct nodemap *m, unsigned node)
{
    return node >= 1 && (int)node <= m->count ? m->names[node - 1] : NULL;
}
