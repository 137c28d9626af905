/*
 * nodes_test: a run's nodes as an input (src/input/nodes.h: which lists are
 * valid, which restart lists, the spec's JSON both ways with and without
 * restarts, the bytes rewind-init reads) and the trace's node of each
 * process, restarted nodes included (src/trace/nodemap.h).
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
    json_t *a = nodes_to_json(v, NULL);
    char *s = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
    CHECK(s && !strcmp(s, "[{\"name\":\"n1\",\"run\":\"etcd --name n1 --x=y\"},"
                          "{\"name\":\"n2\",\"run\":\"a=b\"}]"),
          "the spec's form");
    char **back = NULL, **rback = (char **)1;
    CHECK(nodes_from_json(a, &back, &rback) == 0 && back && back[0] && back[1] && !back[2] &&
              !strcmp(back[0], v[0]) && !strcmp(back[1], v[1]) && rback == NULL,
          "back, entry for entry, and no restarts (invariant 2)");
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
        "[{\"name\":\"n1\",\"run\":\"x\",\"restart\":\"\"}]",
        "[{\"name\":\"n1\",\"run\":\"x\",\"restart\":1}]",
        "[{\"name\":\"n1\",\"run\":\"x\",\"restart\":null}]",
        "[{\"name\":\"n1\",\"run\":\"x\",\"restart\":\"a\\u0000b\"}]",
        "[{\"name\":\"n1\",\"run\":\"x\",\"restart\":\"y\",\"more\":1}]",
        "[{\"name\":\"n1\",\"restart\":\"y\"}]",
        "[{\"name\":\"n1\",\"run\":\"x\",\"more\":\"y\"}]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_error_t je;
        json_t *b = json_loads(bad[i], JSON_ALLOW_NUL, &je);
        char **out = (char **)1, **r = (char **)1;
        CHECK(b && nodes_from_json(b, &out, &r) < 0 && out == NULL && r == NULL, bad[i]);
        json_decref(b);
    }
    char **out = (char **)1, **r = (char **)1;
    CHECK(nodes_from_json(NULL, &out, &r) == 0 && out == NULL && r == NULL, "absent: no nodes");
}

static void test_restarts_valid(void)
{
    char *nodes[] = {"n1=serve", "n2=serve", "n3=serve", NULL}, why[200];
    char *ok[] = {"n3=serve --again", "n1=a=b", NULL};
    CHECK(nodes_restarts_valid(nodes, ok, why, sizeof(why)) == 0, "two restarts, any order");
    CHECK(nodes_restarts_valid(nodes, NULL, why, sizeof(why)) == 0, "no restarts");
    char *none[] = {NULL};
    CHECK(nodes_restarts_valid(nodes, none, why, sizeof(why)) == 0, "an empty list");
    CHECK(nodes_restart_of(ok, "n1", 2) && !strcmp(nodes_restart_of(ok, "n1", 2), "a=b") &&
              !nodes_restart_of(ok, "n2", 2) && !nodes_restart_of(ok, "n", 1),
          "each node's restart");
    CHECK(nodes_restart_mask(nodes, ok) == 0x5 && nodes_restart_mask(nodes, NULL) == 0,
          "bits of nodes 1 and 3");
    static const struct {
        char *r[4];
        const char *why;
    } bad[] = {
        {{"n4=x", NULL}, "--restart n4: no node has that name"},
        {{"n1", NULL}, "--restart n1: give NAME=COMMAND"},
        {{"n1=", NULL}, "--restart n1: the command must have 1..4096 bytes"},
        {{"n1=echo \xff", NULL}, "--restart n1: the command must have 1..4096 bytes of UTF-8"},
        {{"n1=x", "n2=y", "n1=z", NULL}, "--restart n1: a node has at most one restart command"},
        {{"=x", NULL}, "--restart : no node has that name"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = 0;
        CHECK(nodes_restarts_valid(nodes, bad[i].r, why, sizeof(why)) < 0 &&
                  !strncmp(why, bad[i].why, strlen(bad[i].why)) && !strchr(why, '\n'),
              bad[i].why);
    }
    char *one[] = {"n1=x", NULL};
    CHECK(nodes_restarts_valid(NULL, one, why, sizeof(why)) < 0 && strstr(why, "no node"),
          "a restart without nodes");
    char big[NODE_RUN_MAX + 8] = "n1=";
    memset(big + 3, 'x', NODE_RUN_MAX);
    big[3 + NODE_RUN_MAX] = 0;
    char *longest[] = {big, NULL};
    CHECK(nodes_restarts_valid(nodes, longest, why, sizeof(why)) == 0, "a 4096-byte command");
    big[3 + NODE_RUN_MAX] = 'x';
    big[4 + NODE_RUN_MAX] = 0;
    CHECK(nodes_restarts_valid(nodes, longest, why, sizeof(why)) < 0, "a 4097-byte command");
    char name40[64];
    snprintf(name40, sizeof(name40), "%s", "a-very-long-name-of-a-node-no-one-has-at-all=x");
    char *longname[] = {name40, NULL};
    CHECK(nodes_restarts_valid(nodes, longname, why, sizeof(why)) < 0 && strlen(why) < 120,
          "a long name, cut in the error line");
}

static void test_json_restarts(void)
{
    char *v[] = {"n1=serve 1", "n2=serve 2", "n3=serve 3", NULL};
    char *r[] = {"n3=serve 3 --rejoin", "n1=sh -c 'a=b'", NULL};
    char *r2[] = {"n1=sh -c 'a=b'", "n3=serve 3 --rejoin", NULL};
    json_t *a = nodes_to_json(v, r), *a2 = nodes_to_json(v, r2);
    char *s = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
    char *s2 = json_dumps(a2, JSON_SORT_KEYS | JSON_COMPACT);
    CHECK(s && !strcmp(s, "[{\"name\":\"n1\",\"restart\":\"sh -c 'a=b'\",\"run\":\"serve 1\"},"
                          "{\"name\":\"n2\",\"run\":\"serve 2\"},"
                          "{\"name\":\"n3\",\"restart\":\"serve 3 --rejoin\",\"run\":\"serve "
                          "3\"}]"),
          "a restart in its node's object, and none where a node has none");
    CHECK(s && s2 && !strcmp(s, s2), "the restarts' order does not matter (invariant 3)");
    char **back = NULL, **rback = NULL;
    CHECK(nodes_from_json(a, &back, &rback) == 0 && back && rback && rback[0] && rback[1] &&
              !rback[2] && !strcmp(rback[0], r2[0]) && !strcmp(rback[1], r2[1]) &&
              !strcmp(back[0], v[0]) && !strcmp(back[2], v[2]) && !back[3],
          "back, the restarts in the nodes' order (invariant 2)");
    json_t *again = nodes_to_json(back, rback);
    char *s3 = json_dumps(again, JSON_SORT_KEYS | JSON_COMPACT);
    CHECK(s3 && !strcmp(s, s3), "the same JSON again");
    nodes_free(back);
    nodes_free(rback);
    free(s);
    free(s2);
    free(s3);
    json_decref(a);
    json_decref(a2);
    json_decref(again);
    /* The spec: a node without a restart keeps the id it had before restarts. */
    struct run_spec sp = {.cwd = "/", .cpu_model = "m", .nodes = v};
    char id0[17], id1[17], id2[17], id3[17];
    spec_id(&sp, id0);
    char *none[] = {NULL};
    sp.restarts = none;
    spec_id(&sp, id1);
    CHECK(!strcmp(id0, id1), "an empty restart list keeps the id");
    sp.restarts = r;
    spec_id(&sp, id2);
    sp.restarts = r2;
    spec_id(&sp, id3);
    CHECK(strcmp(id0, id2) != 0 && !strcmp(id2, id3), "restarts change the id, not their order");
    char *j = spec_to_json(&sp);
    CHECK(j && strstr(j, "\"nodes\":[{\"name\":\"n1\",\"restart\":\"sh -c 'a=b'\",\"run\":"
                         "\"serve 1\"},{\"name\":\"n2\",\"run\":\"serve 2\"},"),
          "in the spec");
    free(j);
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
    /* No restarts: the bytes as they were. */
    size_t before = len;
    char *none[] = {NULL};
    job = job_append_restarts(job, nodes, none, &len);
    job = job_append_restarts(job, nodes, NULL, &len);
    CHECK(job && len == before, "no restarts section without restarts");
    free(job);
}

static void test_job_sections(void)
{
    char *argv[] = {"true", NULL}, *env[] = {NULL};
    char *nodes[] = {"n1=a", "n2=b", "n3=c", NULL};
    char *restarts[] = {"n3=x", "n1=sh -c 'a=b'", NULL};
    size_t len = 0;
    char *job = job_encode(argv, env, "/", &len);
    job = job_append_nodes(job, nodes, &len);
    size_t base = len;
    job = job_append_restarts(job, nodes, restarts, &len);
    static const char want[] = "REWINDRESTART1\0"
                               "2\0"
                               "n1\0sh -c 'a=b'\0"
                               "n3\0x\0";
    CHECK(job && len - base == sizeof(want) - 1 && !memcmp(job + base, want, sizeof(want) - 1),
          "REWINDRESTART1, the count, NAME NUL COMMAND NUL in the nodes' order");
    base = len;
    job = job_append_netem(job, &len);
    static const char netem[] = "REWINDNETEM1\0";
    CHECK(job && len - base == sizeof(netem) - 1 && !memcmp(job + base, netem, sizeof(netem) - 1),
          "REWINDNETEM1 and nothing more");
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

/* A restarted node's new leader (invariant 4). */
static void test_nodemap_restart(void)
{
    struct nodemap m;
    nodemap_init(&m);
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n1 90");
    CHECK(m.cap == 0 && m.count == 0 && !nodemap_of(&m, 90),
          "a restart before any node start: nothing (invariant 1)");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "n1 50");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_START, "n2 60");
    feed(&m, REWIND_REC_FORK, 0, 50, 51, NULL);
    feed(&m, REWIND_REC_FORK, 0, 1, 90, NULL); /* init forks the restart's leader */
    CHECK(!nodemap_of(&m, 90), "a child of init is in no node");
    feed(&m, REWIND_REC_INIT, 0, 7, REWIND_INIT_NODE_RESTART, "n1 90");
    CHECK(!nodemap_of(&m, 90), "a restart from another pid than init is ignored");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n1 90");
    CHECK(nodemap_of(&m, 90) && !strcmp(nodemap_of(&m, 90), "n1"), "the new leader is n1's");
    CHECK(m.count == 2 && nodemap_name(&m, 1) && !strcmp(nodemap_name(&m, 1), "n1") &&
              !nodemap_name(&m, 3),
          "a restart adds no node: node numbers are the starts'");
    feed(&m, REWIND_REC_FORK, 0, 90, 91, NULL);
    CHECK(nodemap_of(&m, 91) && !strcmp(nodemap_of(&m, 91), "n1"), "its child too");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n3 92");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "job 93");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n1 4194305");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n1 12a");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n1");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n1 0");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n 94");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n12 95");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "");
    CHECK(!nodemap_of(&m, 92) && !nodemap_of(&m, 93) && !nodemap_of(&m, 4194305) &&
              !nodemap_of(&m, 12) && !nodemap_of(&m, 94) && !nodemap_of(&m, 95) && m.count == 2,
          "an unknown name, a name the spec refuses, a pid past the limit and malformed "
          "payloads are ignored (invariants 3 and 4)");
    feed(&m, REWIND_REC_INIT, 0, 1, REWIND_INIT_NODE_RESTART, "n2 51");
    CHECK(nodemap_of(&m, 51) && !strcmp(nodemap_of(&m, 51), "n2"),
          "a restart names the pid's node as the record says");
    nodemap_free(&m);
}

int main(void)
{
    test_valid();
    test_json_round_trip();
    test_restarts_valid();
    test_json_restarts();
    test_spec_id_unchanged_without_nodes();
    test_job_bytes();
    test_job_sections();
    test_nodemap();
    test_nodemap_restart();
    return unit_done();
}
