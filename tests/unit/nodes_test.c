/*
 * nodes_test: a run's nodes as an input (src/input/nodes.h: which lists are
 * valid, the spec's JSON both ways, the bytes rewind-init reads) and the
 * trace's node of each process (src/trace/nodemap.h).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "input/job.h"
#include "input/nodes.h"
#include "input/spec.h"
#include "trace/nodemap.h"
#include "unit.h"

static int valid(char **v)
{
    char why[200];
    return nodes_valid(v, why, sizeof(why)) == 0;
}

static void test_valid(void)
{
    char *ok[] = {"n1=etcd --name n1", "db-2=sleep 1", NULL};
    CHECK(valid(ok), "two good nodes");
    char *none[] = {NULL};
    CHECK(valid(none), "an empty list");
    char *noeq[] = {"n1", NULL};
    CHECK(!valid(noeq), "no '='");
    char *job[] = {"job=true", NULL};
    CHECK(!valid(job), "'job' is the job's name");
    char *upper[] = {"N1=true", NULL};
    CHECK(!valid(upper), "capitals");
    char *digit[] = {"1n=true", NULL};
    CHECK(!valid(digit), "starts with a digit");
    char *empty[] = {"=true", NULL};
    CHECK(!valid(empty), "empty name");
    char *nocmd[] = {"n1=", NULL};
    CHECK(!valid(nocmd), "empty command");
    char *longname[] = {"abcdefghijklmnopq=true", NULL};
    CHECK(!valid(longname), "17-byte name");
    char *name16[] = {"abcdefghijklmnop=true", NULL};
    CHECK(valid(name16), "16-byte name");
    char *twice[] = {"n1=true", "n2=true", "n1=false", NULL};
    CHECK(!valid(twice), "a name twice");
    char *many[NODES_MAX + 2];
    char names[NODES_MAX + 1][24];
    for (int i = 0; i <= NODES_MAX; i++) {
        snprintf(names[i], sizeof(names[i]), "n%d=true", i);
        many[i] = names[i];
    }
    many[NODES_MAX] = NULL;
    CHECK(valid(many), "16 nodes");
    many[NODES_MAX] = names[NODES_MAX];
    many[NODES_MAX + 1] = NULL;
    CHECK(!valid(many), "17 nodes");
    char why[200];
    CHECK(nodes_valid(upper, why, sizeof(why)) < 0 && strstr(why, "--node N1"),
          "the error names the entry");
    char *latin1[] = {"n1=echo \xff", NULL};
    CHECK(!valid(latin1), "a command that is not UTF-8 (the spec is JSON text)");
    char *utf8[] = {"n1=echo \xc3\xa9t\xc3\xa9", NULL};
    CHECK(valid(utf8), "a UTF-8 command");
    char *overlong[] = {"n1=echo \xc0\xaf", NULL};
    CHECK(!valid(overlong), "an overlong encoding");
}

static void test_json_round_trip(void)
{
    char *v[] = {"n1=etcd --name n1 --x=y", "n2=a=b", NULL};
    json_t *a = nodes_to_json(v);
    char *s = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
    CHECK(s && !strcmp(s, "[{\"name\":\"n1\",\"run\":\"etcd --name n1 --x=y\"},"
                          "{\"name\":\"n2\",\"run\":\"a=b\"}]"),
          "the spec's form");
    char **back = NULL;
    CHECK(nodes_from_json(a, &back) == 0 && back && back[0] && back[1] && !back[2] &&
              !strcmp(back[0], v[0]) && !strcmp(back[1], v[1]),
          "back, entry for entry (invariant 2)");
    nodes_free(back);
    free(s);
    json_decref(a);
    const char *bad[] = {
        "[]",
        "{}",
        "[{\"name\":\"n1\"}]",
        "[{\"name\":\"n1\",\"run\":\"x\",\"more\":1}]",
        "[{\"name\":\"n=1\",\"run\":\"x\"}]",
        "[{\"name\":\"job\",\"run\":\"x\"}]",
        "[{\"name\":\"n1\",\"run\":\"\"}]",
        "[{\"name\":\"n1\",\"run\":\"a\\u0000b\"}]",
        "[{\"name\":\"n1\",\"run\":\"x\"},{\"name\":\"n1\",\"run\":\"y\"}]",
        "[1]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_error_t je;
        json_t *b = json_loads(bad[i], JSON_ALLOW_NUL, &je);
        char **out = (char **)1;
        CHECK(b && nodes_from_json(b, &out) < 0 && out == NULL, bad[i]);
        json_decref(b);
    }
    char **out = (char **)1;
    CHECK(nodes_from_json(NULL, &out) == 0 && out == NULL, "absent: no nodes");
}

static void test_spec_id_unchanged_without_nodes(void)
{
    struct run_spec s = {.cwd = "/", .cpu_model = "m"};
    char a[17], b[17];
    spec_id(&s, a);
    char *none[] = {NULL};
    s.nodes = none;
    spec_id(&s, b);
    CHECK(!strcmp(a, b), "an empty list keeps the id");
    char *one[] = {"n1=true", NULL};
    s.nodes = one;
    spec_id(&s, b);
    CHECK(strcmp(a, b) != 0, "a node changes the id");
    char *j = spec_to_json(&s);
    CHECK(j && strstr(j, "\"nodes\":[{\"name\":\"n1\",\"run\":\"true\"}]"), "in the spec");
    free(j);
}

static void test_job_bytes(void)
{
    char *argv[] = {"true", NULL}, *env[] = {NULL};
    size_t len = 0;
    char *job = job_encode(argv, env, "/", &len);
    size_t base = len;
    char *nodes[] = {"n1=sh -c 'a=b'", "n2=x", NULL};
    job = job_append_nodes(job, nodes, &len);
    static const char want[] = "REWINDNODES1\0"
                               "2\0"
                               "n1\0sh -c 'a=b'\0"
                               "n2\0x\0";
    CHECK(job && len - base == sizeof(want) - 1 && !memcmp(job + base, want, sizeof(want) - 1),
          "NAME NUL COMMAND NUL, the first '=' only");
    free(job);
}

static void feed(struct nodemap *m, unsigned kind, unsigned flags, uint32_t pid, uint64_t aux,
                 const char *payload)
{
    nodemap_feed(m, kind, flags, pid, aux, (const uint8_t *)payload, payload ? strlen(payload) : 0);
}

static void test_nodemap(void)
{
    struct nodemap m;
    nodemap_init(&m);
    feed(&m, REWIND_REC_FORK, 0, 1, 50, NULL);
    CHECK(m.cap == 0 && !nodemap_of(&m, 50), "no memory before a node (invariant 1)");
    feed(&m, REWIND_REC_INIT, 0, 7, REWIND_INIT_NODE_START, "n1 50");
    CHECK(!nodemap_of(&m, 50), "a node start from another pid than init is ignored");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "n1 50");
    CHECK(nodemap_of(&m, 50) && !strcmp(nodemap_of(&m, 50), "n1"), "the leader");
    feed(&m, REWIND_REC_FORK, 0, 50, 51, NULL);
    feed(&m, REWIND_REC_FORK, 1, 51, 52, NULL);
    feed(&m, REWIND_REC_FORK, 0, 51, 53, NULL);
    CHECK(nodemap_of(&m, 51) && !strcmp(nodemap_of(&m, 51), "n1"), "a child");
    CHECK(nodemap_of(&m, 53) && !strcmp(nodemap_of(&m, 53), "n1"), "a grandchild");
    CHECK(!nodemap_of(&m, 52), "a thread is no process");
    feed(&m, REWIND_REC_FORK, 0, 1, 60, NULL);
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "node-two 60");
    CHECK(nodemap_of(&m, 60) && !strcmp(nodemap_of(&m, 60), "node-two"), "a second node");
    feed(&m, REWIND_REC_FORK, 0, 1, 70, NULL);
    CHECK(!nodemap_of(&m, 70), "the job is in no node");
    feed(&m, REWIND_REC_FORK, 0, 70, 53, NULL); /* pid 53 exited and was reused */
    CHECK(!nodemap_of(&m, 53), "a reused pid takes its new parent's node (invariant 2)");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "bad");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "x 12a");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, " 12");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "x 99999999999");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "a\"}]x 80");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "job 81");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "\x1b[31m 82");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "n9 4194305");
    CHECK(m.count == 2, "malformed node starts, names the spec refuses and pids past the "
                        "kernel's limit are ignored (invariant 3)");
    feed(&m, REWIND_REC_FORK, 0, 50, 4194305, NULL);
    CHECK(!nodemap_of(&m, 4194305), "a child pid past the limit is ignored");
    for (uint32_t p = 1000; p < 3000; p++)
        feed(&m, REWIND_REC_FORK, 0, 50, p, NULL);
    CHECK(nodemap_of(&m, 2999) && !strcmp(nodemap_of(&m, 2999), "n1") && !m.oom,
          "2000 children: the map grows");
    CHECK(nodemap_of(&m, 60) && !strcmp(nodemap_of(&m, 60), "node-two"), "after growing");
    for (uint32_t p = 1; p <= 64; p++) /* pids that differ only in high bits */
        feed(&m, REWIND_REC_FORK, 0, 50, p << 16, NULL);
    CHECK(nodemap_of(&m, 64u << 16) && !strcmp(nodemap_of(&m, 64u << 16), "n1"),
          "pids apart by 2^16");
    nodemap_free(&m);
}

int main(void)
{
    test_valid();
    test_json_round_trip();
    test_spec_id_unchanged_without_nodes();
    test_job_bytes();
    test_nodemap();
    return unit_done();
}
