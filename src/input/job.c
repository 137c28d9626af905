/* job: see job.h. */

#include "input/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/nodes.h"
#include "util/check.h"

static size_t count(char **v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

static void put(char **p, const char *s)
{
    size_t l = strlen(s) + 1;
    memcpy(*p, s, l);
    *p += l;
}

char *job_encode(char **argv, char **env, const char *cwd, size_t *len)
{
    size_t na = count(argv), ne = count(env), total = 11 + 2 * 24 + strlen(cwd) + 1;
    for (size_t i = 0; i < na; i++)
        total += strlen(argv[i]) + 1;
    for (size_t i = 0; i < ne; i++)
        total += strlen(env[i]) + 1;
    char *buf = malloc(total), *p = buf;
    if (!buf)
        return NULL;
    char num[24];
    put(&p, "REWINDJOB1");
    snprintf(num, sizeof(num), "%zu", na);
    put(&p, num);
    for (size_t i = 0; i < na; i++)
        put(&p, argv[i]);
    snprintf(num, sizeof(num), "%zu", ne);
    put(&p, num);
    for (size_t i = 0; i < ne; i++)
        put(&p, env[i]);
    put(&p, cwd);
    *len = (size_t)(p - buf);
    return buf;
}

char *job_append_collect(char *job, const char *collect, size_t *len)
{
    size_t add = sizeof("REWINDCOLLECT1") + strlen(collect) + 1;
    char *buf = realloc(job, *len + add), *p;
    if (!buf) {
        free(job);
        return NULL;
    }
    p = buf + *len;
    put(&p, "REWINDCOLLECT1");
    put(&p, collect);
    *len = (size_t)(p - buf);
    return buf;
}

char *job_encode_props(char **argv, char **env, const char *cwd, const char *property,
                       char **expect, size_t *len)
{
    size_t nf = 0, extra = 13 + 24 + (property ? strlen(property) : 0) + 1;
    for (size_t i = 0; expect && expect[i]; i++)
        if (!strncmp(expect[i], "file:", 5)) {
            nf++;
            extra += strlen(expect[i]) + 1;
        }
    size_t base = 0;
    char *job = job_encode(argv, env, cwd, &base);
    if (!job || (!property && !nf)) {
        *len = base;
        return job;
    }
    char *buf = realloc(job, base + extra), *p;
    if (!buf) {
        free(job);
        return NULL;
    }
    p = buf + base;
    char num[24];
    put(&p, "REWINDPROPS1");
    put(&p, property ? property : "");
    snprintf(num, sizeof(num), "%zu", nf);
    put(&p, num);
    for (size_t i = 0; expect && expect[i]; i++)
        if (!strncmp(expect[i], "file:", 5)) {
            const char *path = expect[i] + 5, *t = strchr(path, '~');
            size_t l = t ? (size_t)(t - path) : strlen(path);
            memcpy(p, path, l);
            p[l] = 0;
            p += l + 1;
        }
    *len = (size_t)(p - buf);
    return buf;
}

/* Append TAG NUL, n NUL, then NAME NUL COMMAND NUL for each "NAME=COMMAND"
 * of v (n entries): the same bytes, '=' as NUL. */
static char *append_pairs(char *job, const char *tag, char *const *v, size_t n, size_t *len)
{
    size_t add = strlen(tag) + 1 + 24;
    for (size_t i = 0; i < n; i++)
        add += strlen(v[i]) + 1;
    char *buf = realloc(job, *len + add), *p;
    if (!buf) {
        free(job);
        return NULL;
    }
    p = buf + *len;
    char num[24];
    put(&p, tag);
    snprintf(num, sizeof(num), "%zu", n);
    put(&p, num);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(v[i], '=');
        size_t l = strlen(v[i]) + 1;
        memcpy(p, v[i], l);
        if (eq)
            p[eq - v[i]] = 0;
        p += l;
    }
    *len = (size_t)(p - buf);
    return buf;
}

char *job_append_nodes(char *job, char *const *nodes, size_t *len)
{
    return append_pairs(job, "REWINDNODES1", nodes, count((char **)nodes), len);
}

char *job_append_restarts(char *job, char *const *nodes, char *const *restarts, size_t *len)
{
    size_t n = count((char **)restarts), done = 0;
    if (!n)
        return job;
    char *ordered[NODES_MAX + 1];
    for (size_t i = 0; nodes && nodes[i] && done < NODES_MAX; i++) /* nodes.h invariant 3 */
        for (size_t k = 0; k < n; k++)
            if (nodes_name_len(restarts[k]) == nodes_name_len(nodes[i]) &&
                !memcmp(restarts[k], nodes[i], nodes_name_len(nodes[i])))
                ordered[done++] = restarts[k];
    RW_ASSERT(done == n); /* nodes.h invariant 3: each names a node, once */
    return append_pairs(job, "REWINDRESTART1", ordered, n, len);
}

char *job_append_netem(char *job, size_t *len)
{
    char *buf = realloc(job, *len + sizeof("REWINDNETEM1")), *p;
    if (!buf) {
        free(job);
        return NULL;
    }
    p = buf + *len;
    put(&p, "REWINDNETEM1");
    *len = (size_t)(p - buf);
    return buf;
}
