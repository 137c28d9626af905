/*
 * runnames: see runnames.h.
 */
#include "home/runnames.h"

#include <limits.h>
#include <string.h>

#include "util/homepath.h"
#include "util/check.h"

int runnames_id_shaped(const char *s)
{
    size_t i = 0;
    while (i < 16 && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
        i++;
    if (i != 16)
        return 0;
    if (!s[i])
        return 1;
    if (s[i] != '~' || !s[i + 1])
        return 0;
    for (i++; s[i]; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

int runnames_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > RUNNAMES_LEN || s[0] == '@' || s[0] == '.' || strchr(s, '/'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return !runnames_id_shaped(s); /* invariant 2 */
}

int runnames_in(json_t *a, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (!strcmp(json_string_value(v), s))
            return 1;
    }
    return 0;
}

static void add(json_t *a, const char *s)
{
    if (!runnames_valid(s) || runnames_in(a, s))
        return;
    if (json_array_size(a) >= RUNNAMES_MAX)
        json_array_remove(a, 0);
    json_array_append_new(a, json_string(s));
}

json_t *runnames_of(json_t *m)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(m, "names"), i, v)
    {
        if (json_is_string(v))
            add(a, json_string_value(v));
    }
    const char *nm = json_string_value(json_object_get(m, "name"));
    if (nm)
        add(a, nm);
    return a;
}

int runnames_has(json_t *m, const char *ref)
{
    json_t *a = runnames_of(m);
    int r = a && runnames_in(a, ref);
    json_decref(a);
    return r;
}

json_t *runnames_merged(const char *home, const char *dir, const char *name)
{
    char mp[PATH_MAX];
    json_t *old = NULL;
    if (home_path(mp, sizeof(mp), home, HOME_RUNS, dir, "manifest.json") == 0) {
        json_error_t je;
        old = json_load_file(mp, 0, &je); /* none or unreadable: no names */
    }
    json_t *a = old ? runnames_of(old) : json_array();
    json_decref(old);
    if (!a)
        return NULL;
    if (name)
        add(a, name);
    size_t before = json_array_size(a);
    RW_ASSERT(before <= RUNNAMES_MAX);
    if (!before) {
        json_decref(a);
        return NULL;
    }
    return a;
}
