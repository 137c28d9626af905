/* job: see job.h. */

#include "run/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
