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
        size_t cl = strlen(eq + 1);
        json_t *utf8 = json_string(eq + 1); /* NULL unless UTF-8: the spec is JSON text */
        json_decref(utf8);
        if (cl < 1 || cl > NODE_RUN_MAX || !utf8) {
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

json_t *nodes_to_json(char *const *v)
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

int nodes_from_json(json_t *a, char ***out)
{
    *out = NULL;
    if (!a)
        return 0;
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n < 1 || n > NODES_MAX)
        return -1;
    char **v = calloc(n + 1, sizeof(*v));
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(a, i);
        const char *name = json_string_value(json_object_get(o, "name"));
        const char *run = json_string_value(json_object_get(o, "run"));
        if (!json_is_object(o) || json_object_size(o) != 2 || !name || !run ||
            strlen(name) != json_string_length(json_object_get(o, "name")) ||
            strlen(run) != json_string_length(json_object_get(o, "run")) || strchr(name, '=') ||
            asprintf(&v[i], "%s=%s", name, run) < 0) {
            v[i] = NULL;
            nodes_free(v);
            return -1;
        }
    }
    char why[200];
    if (nodes_valid(v, why, sizeof(why)) < 0) {
        nodes_free(v);
        return -1;
    }
    *out = v;
    return 0;
}
