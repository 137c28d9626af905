/* nodes: see nodes.h. */

#include "input/nodes.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewind.h"
#include "util/check.h"

_Static_assert(NODES_MAX == RW_NODES_MAX, "one node limit for the CLI, the spec and init");

size_t nodes_name_len(const char *e)
{
    const char *eq = strchr(e, '=');
    return eq ? (size_t)(eq - e) : strlen(e);
}

int nodes_name_ok(const char *s, size_t n)
{
    if (n < 1 || n > NODE_NAME_MAX || s[0] < 'a' || s[0] > 'z')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return !(n == 3 && !memcmp(s, "job", 3));
}

/* A command of 1..NODE_RUN_MAX bytes of UTF-8 (the spec is JSON text). */
static int command_ok(const char *c)
{
    size_t cl = strlen(c);
    json_t *utf8 = json_string(c); /* NULL unless UTF-8 */
    json_decref(utf8);
    return cl >= 1 && cl <= NODE_RUN_MAX && utf8;
}

int nodes_valid(char *const *v, char *why, size_t whylen)
{
    size_t n = 0;
    for (; v && v[n]; n++) {
        const char *e = v[n], *eq = strchr(e, '=');
        size_t nl = nodes_name_len(e);
        if (!eq) {
            snprintf(why, whylen, "--node %s: give NAME=COMMAND", e);
            return -1;
        }
        if (!nodes_name_ok(e, nl)) {
            snprintf(why, whylen,
                     "--node %.*s: a node's name is 1..%d of a-z, 0-9 and '-', starting with a "
                     "letter, and not 'job'",
                     (int)(nl > 40 ? 40 : nl), e, NODE_NAME_MAX);
            return -1;
        }
        if (!command_ok(eq + 1)) {
            snprintf(why, whylen, "--node %.*s: the command must have 1..%d bytes of UTF-8",
                     (int)nl, e, NODE_RUN_MAX);
            return -1;
        }
        for (size_t k = 0; k < n; k++)
            if (nodes_name_len(v[k]) == nl && !memcmp(v[k], e, nl)) {
                snprintf(why, whylen, "--node %.*s: two nodes have that name", (int)nl, e);
                return -1;
            }
        if (n + 1 > NODES_MAX) {
            snprintf(why, whylen, "--node: at most %d nodes", NODES_MAX);
            return -1;
        }
    }
    return 0;
}

const char *nodes_restart_of(char *const *restarts, const char *name, size_t nl)
{
    for (size_t i = 0; restarts && restarts[i]; i++)
        if (nodes_name_len(restarts[i]) == nl && !memcmp(restarts[i], name, nl) &&
            restarts[i][nl] == '=')
            return restarts[i] + nl + 1;
    return NULL;
}

int nodes_restarts_valid(char *const *nodes, char *const *restarts, char *why, size_t whylen)
{
    for (size_t n = 0; restarts && restarts[n]; n++) {
        const char *e = restarts[n], *eq = strchr(e, '=');
        size_t nl = nodes_name_len(e), k = 0;
        int cut = nl > 40; /* the error line names at most 40 bytes of it */
        if (!eq) {
            snprintf(why, whylen, "--restart %.40s%s: give NAME=COMMAND", e, cut ? "..." : "");
            return -1;
        }
        while (nodes && nodes[k] && !(nodes_name_len(nodes[k]) == nl && !memcmp(nodes[k], e, nl)))
            k++;
        if (!nodes || !nodes[k]) {
            snprintf(why, whylen, "--restart %.*s%s: no node has that name (--node NAME=COMMAND)",
                     (int)(cut ? 40 : nl), e, cut ? "..." : "");
            return -1;
        }
        if (!command_ok(eq + 1)) {
            snprintf(why, whylen, "--restart %.*s: the command must have 1..%d bytes of UTF-8",
                     (int)nl, e, NODE_RUN_MAX);
            return -1;
        }
        for (size_t j = 0; j < n; j++)
            if (nodes_name_len(restarts[j]) == nl && !memcmp(restarts[j], e, nl)) {
                snprintf(why, whylen, "--restart %.*s: a node has at most one restart command",
                         (int)nl, e);
                return -1;
            }
    }
    return 0;
}

unsigned nodes_restart_mask(char *const *nodes, char *const *restarts)
{
    unsigned m = 0;
    for (size_t i = 0; nodes && nodes[i] && i < NODES_MAX; i++)
        if (nodes_restart_of(restarts, nodes[i], nodes_name_len(nodes[i])))
            m |= 1u << i;
    return m;
}

json_t *nodes_to_json(char *const *v, char *const *restarts)
{
    json_t *a = json_array();
    for (size_t i = 0; v && v[i]; i++) {
        size_t nl = nodes_name_len(v[i]);
        RW_ASSERT(v[i][nl] == '='); /* invariant 1: only valid lists */
        json_t *o = json_object();
        json_object_set_new(o, "name", json_stringn(v[i], nl));
        json_t *run = json_string(v[i] + nl + 1);
        RW_ASSERT(run); /* invariant 1: UTF-8 */
        json_object_set_new(o, "run", run);
        const char *rs = nodes_restart_of(restarts, v[i], nl);
        if (rs) { /* absent without one: every other spec unchanged */
            json_t *r = json_string(rs);
            RW_ASSERT(r); /* invariant 3: UTF-8 */
            json_object_set_new(o, "restart", r);
        }
        json_array_append_new(a, o);
    }
    return a;
}

void nodes_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* A JSON string without a NUL inside (jansson keeps them). */
static const char *plain_string(json_t *s)
{
    const char *v = json_string_value(s);
    return v && strlen(v) == json_string_length(s) ? v : NULL;
}

int nodes_from_json(json_t *a, char ***out, char ***restarts)
{
    *out = *restarts = NULL;
    if (!a)
        return 0;
    size_t n = json_array_size(a), nr = 0;
    if (!json_is_array(a) || n < 1 || n > NODES_MAX)
        return -1;
    char **v = calloc(n + 1, sizeof(*v)), **r = calloc(n + 1, sizeof(*r));
    int bad = !v || !r;
    for (size_t i = 0; !bad && i < n; i++) {
        json_t *o = json_array_get(a, i), *rj = json_object_get(o, "restart");
        const char *name = plain_string(json_object_get(o, "name"));
        const char *run = plain_string(json_object_get(o, "run"));
        const char *rs = plain_string(rj);
        bad = !json_is_object(o) || json_object_size(o) != (rj ? 3u : 2u) || !name || !run ||
              (rj && !rs) || strchr(name, '=') || asprintf(&v[i], "%s=%s", name, run) < 0;
        if (bad) {
            v[i] = NULL; /* asprintf leaves it undefined */
        } else if (rs) {
            bad = asprintf(&r[nr], "%s=%s", name, rs) < 0;
            if (bad)
                r[nr] = NULL;
            else
                nr++;
        }
    }
    char why[200];
    if (bad || nodes_valid(v, why, sizeof(why)) < 0 ||
        nodes_restarts_valid(v, r, why, sizeof(why)) < 0) {
        nodes_free(v);
        nodes_free(r);
        return -1;
    }
    *out = v;
    if (nr)
        *restarts = r;
    else
        nodes_free(r);
    return 0;
}
