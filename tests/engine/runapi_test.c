/* runapi_test: the parts of the Running API (include/rewind.h) that need no
 * KVM: the one table of run defaults behind rw_run_config_init, the `rewind
 * run` line rw_command_line gives for a stored spec, the exit code of each
 * phase of a run (src/run/ctx.h invariant 2), the test holes by name, the
 * nodes' restarts and net faults from a config and from a stored spec, and
 * disk faults' and power cuts' glob (and rewind.power) from a config, from a
 * stored spec, on the command line and on the guest kernel's command line
 * (docs/faults.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "home/rundir.h"
#include "input/faults.h"
#include "util/io.h"
#include "rewind.h"
#include "rewind_test.h"
#include "run/ctx.h"
#include "run/modes.h"
#include "unit.h"

static void write_run(const char *home, const char *id, const char *spec)
{
    char dir[4200], path[4300], text[4096];
    snprintf(dir, sizeof(dir), "%s/runs/%s", home, id);
    io_mkdir_p(dir);
    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    snprintf(text, sizeof(text),
             "{\"id\":\"%s\",\"state\":\"complete\",\"outcome\":\"exited\",\"steps\":10,"
             "\"spec\":%s}\n",
             id, spec);
    CHECK(rundir_write_file(path, text) == 0, "write a manifest");
}

static void test_defaults(void)
{
    struct rw_run_config c;
    rw_run_config_init(&c);
    CHECK(c.mem_mib == rw_defaults.mem_mib && c.mem_mib == 512, "mem from the table");
    CHECK(c.quantum_ns == rw_defaults.quantum_ns && c.quantum_ns == 5000, "quantum");
    CHECK(rw_defaults.keyframe_every == 4096 && rw_defaults.pct_horizon == 65536, "cadences");
    CHECK(!strcmp(c.cwd, "/") && c.seed == 0, "cwd and seed");
    CHECK(c.env && !strcmp(c.env[0], rw_defaults.path_env) &&
              !strcmp(c.env[1], rw_defaults.home_env) && !c.env[2],
          "env: the default PATH and HOME only");
    CHECK(c.epoch_s == rw_default_epoch((int64_t)time(NULL)) && c.epoch_s % 86400 == 0,
          "epoch: midnight UTC today");
    CHECK(c.schedule_until == UINT64_MAX && !c.schedule, "unperturbed");
}

/* an image is named by its hash (run/api.c inv. 4) */
#define IMG "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_command_line(const char *home)
{
    rw_home *h;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0, "open the home");
    write_run(home, "00112233445566aa",
              "{\"image\":\"" IMG "\",\"cwd\":\"/tmp\",\"argv\":[\"sh\",\"-c\",\"echo 'hi'\"],"
              "\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\","
              "\"HOME=/root\",\"X=a b\"],\"mem_mib\":256,\"seed\":7,\"epoch\":86400,"
              "\"quantum_ns\":5000,\"perturb\":[[3,20,null,20,65536]]}");
    char *line = NULL;
    int exact = 0;
    CHECK(rw_command_line(h, "00112233445566aa", &line, &exact, &err) == 0, "a command line");
    char want[8192];
    snprintf(want, sizeof(want),
             "rewind run --root %s/images/" IMG ".erofs --cwd /tmp -e 'X=a b' --mem 256 --seed 7 "
             "--epoch 86400 --quantum 5000 --schedule 3 --schedule-from 20 -- sh -c "
             "'echo '\\''hi'\\'''",
             rw_home_path(h));
    CHECK(line && !strcmp(line, want), "the line recreates the spec from the defaults table");
    if (line && strcmp(line, want))
        fprintf(stderr, "got  %s\nwant %s\n", line, want);
    CHECK(exact == 1, "a --schedule the flags can say");
    free(line);
    /* a fork's perturbation (origin not at from) has no flags: not exact */
    write_run(home, "00112233445566bb",
              "{\"image\":\"" IMG "\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[],\"mem_mib\":512,"
              "\"seed\":0,\"epoch\":0,\"quantum_ns\":5000,\"perturb\":[[4,30,null,11,99]]}");
    CHECK(rw_command_line(h, "00112233445566bb", &line, &exact, &err) == 0 && exact == 0,
          "a fork's perturbation is not exact");
    CHECK(line && !strstr(line, "--schedule"), "and gets no --schedule flag");
    free(line);
    CHECK(rw_command_line(h, "ffff", &line, &exact, &err) < 0 && err.code == RW_EUSAGE,
          "an unknown run is a usage error");
    rw_home_close(h);
}

/* --restart and --faults net (docs/faults.md): the config's checks, one
 * line each; the spec read back (restarts in the nodes' order, the
 * schedule's restart bits); and the command line show gives. */
static void test_restarts(const char *home)
{
    rw_home *h;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0, "open the home");
    char *argv[] = {"true", NULL};
    char *nodes[] = {"n1=serve 1", "n2=serve 2", "n3=serve 3", NULL};
    char *restarts[] = {"n3=serve 3 --rejoin", "n1=serve 1", NULL};
    struct rw_run_config c;
    rw_run_config_init(&c);
    c.root = "/nonexistent";
    c.argv = argv;
    c.mem_mib = 64;
    c.nodes = nodes;
    c.restarts = restarts;
    c.faults = "net,kill";
    c.schedule = 1;
    struct run_opts o;
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "nodes, restarts and net faults");
    CHECK(o.restarts == restarts && o.sched.fault_restart == 0x5 &&
              o.sched.fault_kinds == ((1u << FAULT_KILL) | (1u << FAULT_NET)) &&
              o.sched.fault_nodes == 3,
          "the restart bits of nodes 1 and 3");
    static const struct {
        char *r[4];
        const char *msg;
    } bad[] = {
        {{"n4=x", NULL}, "--restart n4: no node has that name"},
        {{"n1=x", "n1=y", NULL}, "--restart n1: a node has at most one restart command"},
        {{"n2", NULL}, "--restart n2: give NAME=COMMAND"},
        {{"n2=", NULL}, "--restart n2: the command must have 1..4096 bytes of UTF-8"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        c.restarts = (char **)bad[i].r;
        memset(&err, 0, sizeof(err));
        CHECK(run_opts_from_config(h, &c, &o, &err) < 0 && err.code == RW_EUSAGE &&
                  !strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) && !strchr(err.msg, '\n'),
              bad[i].msg);
        if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)))
            fprintf(stderr, "  got: %s\n", err.msg);
    }
    c.nodes = NULL;
    c.restarts = restarts;
    c.faults = NULL;
    CHECK(run_opts_from_config(h, &c, &o, &err) < 0 && strstr(err.msg, "no node has that name"),
          "a restart without nodes");
    /* A stored spec with restarts and net faults, read back. */
    char img[4300];
    snprintf(img, sizeof(img), "%s/images", home);
    io_mkdir_p(img);
    snprintf(img, sizeof(img), "%s/images/" IMG ".erofs", home);
    CHECK(rundir_write_file(img, "") == 0, "an image file");
    const char *spec_text =
        "{\"image\":\"" IMG "\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[],\"mem_mib\":256,"
        "\"seed\":0,\"epoch\":0,\"quantum_ns\":5000,\"perturb\":[[3,20,null,20,65536]],"
        "\"faults\":{\"kinds\":\"kill,net\",\"rate\":2},"
        "\"nodes\":[{\"name\":\"n1\",\"restart\":\"serve 1\",\"run\":\"serve 1\"},"
        "{\"name\":\"n2\",\"run\":\"serve 2\"},"
        "{\"name\":\"n3\",\"restart\":\"serve 3 --rejoin\",\"run\":\"serve 3\"}]}";
    json_t *spec = json_loads(spec_text, 0, NULL);
    struct run_stored st;
    memset(&st, 0, sizeof(st));
    char msg[512];
    CHECK(spec && run_opts_from_spec(spec, home, &st.o, &st.ins, msg, sizeof(msg)) == 0,
          "the spec read back");
    CHECK(st.o.restarts && st.o.restarts[0] && st.o.restarts[1] && !st.o.restarts[2] &&
              !strcmp(st.o.restarts[0], "n1=serve 1") &&
              !strcmp(st.o.restarts[1], "n3=serve 3 --rejoin") && st.o.sched.fault_restart == 0x5 &&
              st.o.sched.fault_nodes == 3 &&
              st.o.sched.fault_kinds == ((1u << FAULT_KILL) | (1u << FAULT_NET)),
          "its restarts in the nodes' order, their bits and the kinds");
    run_stored_free(&st);
    CHECK(!st.o.restarts && !st.o.nodes, "freed");
    json_decref(spec);
    write_run(home, "00112233445566cc", spec_text);
    char *line = NULL;
    int exact = 0;
    CHECK(rw_command_line(h, "00112233445566cc", &line, &exact, &err) == 0, "a command line");
    CHECK(line && strstr(line, " --faults kill,net --fault-rate 2") &&
              strstr(line, " --node 'n1=serve 1' --node 'n2=serve 2' --node 'n3=serve 3' "
                           "--restart 'n1=serve 1' --restart 'n3=serve 3 --rejoin' -- true"),
          "--restart for each node that has one");
    if (line && !strstr(line, "--restart 'n1=serve 1' --restart"))
        fprintf(stderr, "got %s\n", line);
    free(line);
    rw_home_close(h);
}

/* A config with three nodes and schedule 1, faults kinds and glob as given. */
static void disk_config(struct rw_run_config *c, const char *faults, const char *glob)
{
    static char *argv[] = {"true", NULL};
    static char *nodes[] = {"n1=serve 1", "n2=serve 2", "n3=serve 3", NULL};
    rw_run_config_init(c);
    c->root = "/nonexistent";
    c->argv = argv;
    c->mem_mib = 64;
    c->nodes = nodes;
    c->schedule = 1;
    c->faults = faults;
    c->disk_glob = glob;
}

/* --faults disk and --disk-glob (docs/faults.md): the config's checks, one
 * line each; the default glob; the spec read back; rw_command_line; the
 * guest kernel's command line (faults.h invariant 5). */
static void test_disk_faults(const char *home)
{
    rw_home *h;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0, "open the home");
    struct rw_run_config c;
    struct run_opts o;
    disk_config(&c, "kill,disk", NULL);
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 &&
              o.sched.fault_kinds == ((1u << FAULT_KILL) | (1u << FAULT_DISK)) &&
              !strcmp(o.sched.fault_disk_glob, "*"),
          "disk faults without --disk-glob: every file");
    disk_config(&c, "all", "/data/*.wal");
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 && o.sched.fault_kinds == FAULT_KINDS_ALL &&
              !strcmp(o.sched.fault_disk_glob, "/data/*.wal"),
          "all has disk; the glob given");
    disk_config(&c, "kill,net", NULL);
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 && !o.sched.fault_disk_glob[0],
          "no glob without disk");
    char big[256];
    memset(big, 'a', sizeof(big));
    big[201] = 0;
    const struct {
        const char *faults, *glob, *msg;
    } bad[] = {
        {NULL, "*", "--disk-glob needs --faults with disk or power"},
        {"kill,net", "*", "--disk-glob needs --faults with disk or power: kill,net"},
        {"kill,split", "*", "--disk-glob needs --faults with disk or power: kill,split"},
        {"disk", "", "--disk-glob needs a glob of 1..200 printable bytes without spaces or quotes"},
        {"disk", "/a b", "--disk-glob needs a glob of 1..200 printable bytes"},
        {"disk", "/a'b", "--disk-glob needs a glob of 1..200 printable bytes"},
        {"disk", "/a\"b", "--disk-glob needs a glob of 1..200 printable bytes"},
        {"disk", "/a\tb", "--disk-glob needs a glob of 1..200 printable bytes"},
        {"disk", "/\xc3\xa9", "--disk-glob needs a glob of 1..200 printable bytes"},
        {"disk", big, "--disk-glob needs a glob of 1..200 printable bytes"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        disk_config(&c, bad[i].faults, bad[i].glob);
        memset(&err, 0, sizeof(err));
        CHECK(run_opts_from_config(h, &c, &o, &err) < 0 && err.code == RW_EUSAGE &&
                  !strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) && !strchr(err.msg, '\n'),
              bad[i].msg);
        if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)))
            fprintf(stderr, "  got: %s\n", err.msg);
    }
    big[200] = 0;
    disk_config(&c, "disk", big);
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 && strlen(o.sched.fault_disk_glob) == 200,
          "a glob of 200 bytes");
    /* The kernel command line: rewind.diskglob= only with disk, after rewind.track=. */
    char line[1024];
    disk_config(&c, "kill,disk", "/data/*");
    c.track_writes = "/out/*";
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "disk and track-writes");
    int n = run_kernel_cmdline(&o, line, sizeof(line));
    CHECK(n > 0 && (size_t)n == strlen(line) &&
              strstr(line, " rewind.track=/out/* rewind.diskglob=/data/*") &&
              !strcmp(line + n - strlen(" rewind.diskglob=/data/*"), " rewind.diskglob=/data/*"),
          "rewind.diskglob= beside rewind.track=");
    if (n > 0 && !strstr(line, "rewind.diskglob=/data/*"))
        fprintf(stderr, "  got: %s\n", line);
    disk_config(&c, "kill,net", NULL);
    c.track_writes = "/out/*";
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "net, no disk");
    char plain[1024];
    int pn = run_kernel_cmdline(&o, plain, sizeof(plain));
    CHECK(pn > 0 && !strstr(plain, "diskglob") && (size_t)pn > strlen(" rewind.track=/out/*") &&
              !strcmp(plain + pn - strlen(" rewind.track=/out/*"), " rewind.track=/out/*"),
          "no rewind.diskglob= without disk");
    strcpy(o.sched.fault_disk_glob, "*"); /* a stray glob without disk is no word either */
    CHECK(run_kernel_cmdline(&o, plain, sizeof(plain)) == pn && !strstr(plain, "diskglob"),
          "only the kinds decide");
    /* Every optional word at its longest fits; a line that does not is refused. */
    memset(big, 'b', sizeof(big));
    big[200] = 0;
    disk_config(&c, "disk", big);
    c.track_writes = big;
    c.dirorder_on = 1;
    c.dirorder = (uint64_t)INT64_MAX;
    c.preempt = "memory";
    c.cpus = 64;
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "the longest words");
    n = run_kernel_cmdline(&o, line, sizeof(line));
    CHECK(n > 400 && (size_t)n == strlen(line) && strstr(line, " rewind.cpus=64") &&
              strstr(line, " rewind.preempt=memory"),
          "the longest line fits in run_boot's buffer");
    CHECK(run_kernel_cmdline(&o, line, (size_t)n) == -1 &&
              run_kernel_cmdline(&o, line, (size_t)n + 1) == n,
          "one byte short is too long");
    /* A stored spec with disk faults: read back, and its command line. */
    char img[4300];
    snprintf(img, sizeof(img), "%s/images", home);
    io_mkdir_p(img);
    snprintf(img, sizeof(img), "%s/images/" IMG ".erofs", home);
    CHECK(rundir_write_file(img, "") == 0, "an image file");
    const char *spec_text =
        "{\"image\":\"" IMG "\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[],\"mem_mib\":256,"
        "\"seed\":0,\"epoch\":0,\"quantum_ns\":5000,\"perturb\":[[3,20,null,20,65536]],"
        "\"faults\":{\"disk_glob\":\"/var/lib/*\",\"kinds\":\"kill,disk\",\"rate\":2},"
        "\"nodes\":[{\"name\":\"n1\",\"run\":\"serve 1\"}]}";
    json_t *spec = json_loads(spec_text, 0, NULL);
    struct run_stored st;
    memset(&st, 0, sizeof(st));
    char msg[512];
    CHECK(spec && run_opts_from_spec(spec, home, &st.o, &st.ins, msg, sizeof(msg)) == 0 &&
              st.o.sched.fault_kinds == ((1u << FAULT_KILL) | (1u << FAULT_DISK)) &&
              !strcmp(st.o.sched.fault_disk_glob, "/var/lib/*"),
          "the glob read back");
    n = run_kernel_cmdline(&st.o, line, sizeof(line));
    CHECK(n > 0 && strstr(line, " rewind.diskglob=/var/lib/*"), "and on the kernel's line");
    run_stored_free(&st);
    json_decref(spec);
    const char *bad_spec =
        "{\"image\":\"" IMG "\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[],\"mem_mib\":256,"
        "\"seed\":0,\"epoch\":0,\"quantum_ns\":5000,"
        "\"faults\":{\"disk_glob\":\"/a b\",\"kinds\":\"kill,disk\",\"rate\":2},"
        "\"nodes\":[{\"name\":\"n1\",\"run\":\"serve 1\"}]}";
    spec = json_loads(bad_spec, 0, NULL);
    memset(&st, 0, sizeof(st));
    CHECK(spec && run_opts_from_spec(spec, home, &st.o, &st.ins, msg, sizeof(msg)) < 0,
          "a spec's glob with a space is refused");
    run_stored_free(&st);
    json_decref(spec);
    write_run(home, "00112233445566dd", spec_text);
    char *cl = NULL;
    int exact = 0;
    CHECK(rw_command_line(h, "00112233445566dd", &cl, &exact, &err) == 0 && cl &&
              strstr(cl, " --faults kill,disk --fault-rate 2 --disk-glob '/var/lib/*'"),
          "--disk-glob after --faults");
    if (cl && !strstr(cl, "--disk-glob"))
        fprintf(stderr, "got %s\n", cl);
    free(cl);
    write_run(home, "00112233445566ee",
              "{\"image\":\"" IMG "\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[],"
              "\"mem_mib\":256,\"seed\":0,\"epoch\":0,\"quantum_ns\":5000,"
              "\"perturb\":[[3,20,null,20,65536]],\"faults\":{\"kinds\":\"kill,net\",\"rate\":2},"
              "\"nodes\":[{\"name\":\"n1\",\"run\":\"serve 1\"}]}");
    CHECK(rw_command_line(h, "00112233445566ee", &cl, &exact, &err) == 0 && cl &&
              !strstr(cl, "--disk-glob"),
          "no --disk-glob without disk");
    free(cl);
    rw_home_close(h);
}

/* --faults power (docs/faults.md): the disk glob as with disk (default
 * "*", --disk-glob taken), on the guest kernel's command line
 * rewind.diskglob= and then rewind.power; a run without power keeps its
 * line; a stored spec with power read back, with its command line. */
static void test_power_faults(const char *home)
{
    rw_home *h;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0, "open the home");
    struct rw_run_config c;
    struct run_opts o;
    disk_config(&c, "kill,power", NULL);
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 &&
              o.sched.fault_kinds == ((1u << FAULT_KILL) | (1u << FAULT_POWER)) &&
              !strcmp(o.sched.fault_disk_glob, "*"),
          "power without --disk-glob: every file");
    disk_config(&c, "power", "/data/*");
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 && o.sched.fault_kinds == 1u << FAULT_POWER &&
              !strcmp(o.sched.fault_disk_glob, "/data/*"),
          "power takes --disk-glob");
    disk_config(&c, "power", "/a b");
    memset(&err, 0, sizeof(err));
    CHECK(run_opts_from_config(h, &c, &o, &err) < 0 && err.code == RW_EUSAGE &&
              strstr(err.msg, "--disk-glob needs a glob of 1..200 printable bytes"),
          "power's glob is checked as disk's");
    disk_config(&c, "all", NULL);
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 && o.sched.fault_kinds == FAULT_KINDS_ALL &&
              (o.sched.fault_kinds & (1u << FAULT_POWER)) && !strcmp(o.sched.fault_disk_glob, "*"),
          "all has power");
    /* The kernel command line: rewind.power right after rewind.diskglob=. */
    char line[1024], plain[1024];
    disk_config(&c, "kill,power", "/data/*");
    c.track_writes = "/out/*";
    c.preempt = "memory";
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "power and track-writes");
    int n = run_kernel_cmdline(&o, line, sizeof(line));
    CHECK(n > 0 && (size_t)n == strlen(line) &&
              strstr(line, " rewind.track=/out/* rewind.diskglob=/data/* rewind.power "
                           "rewind.preempt=memory") &&
              !strstr(strstr(line, "rewind.power") + 1, "rewind.power"),
          "rewind.power after rewind.diskglob=");
    if (n > 0 && !strstr(line, " rewind.diskglob=/data/* rewind.power "))
        fprintf(stderr, "  got: %s\n", line);
    disk_config(&c, "power", NULL);
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "power alone");
    n = run_kernel_cmdline(&o, line, sizeof(line));
    CHECK(n > 0 && !strcmp(line + n - strlen(" rewind.diskglob=* rewind.power"),
                           " rewind.diskglob=* rewind.power"),
          "power alone: both words, last");
    disk_config(&c, "disk,power", "/d/*");
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "disk and power");
    n = run_kernel_cmdline(&o, line, sizeof(line));
    CHECK(n > 0 && strstr(line, " rewind.diskglob=/d/* rewind.power") &&
              !strstr(strstr(line, "rewind.diskglob=") + 1, "rewind.diskglob="),
          "disk and power: one glob");
    /* Without power, the line is what it was: no rewind.power, even with a
     * stray glob, and the words of disk alone. */
    disk_config(&c, "kill,disk", "/d/*");
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "disk without power");
    n = run_kernel_cmdline(&o, plain, sizeof(plain));
    CHECK(n > 0 && !strstr(plain, "rewind.power") &&
              !strcmp(plain + n - strlen(" rewind.diskglob=/d/*"), " rewind.diskglob=/d/*"),
          "no rewind.power without power");
    disk_config(&c, "kill,split", NULL);
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0 && !o.sched.fault_disk_glob[0],
          "no glob without disk or power");
    n = run_kernel_cmdline(&o, plain, sizeof(plain));
    CHECK(n > 0 && !strstr(plain, "rewind.power") && !strstr(plain, "diskglob"),
          "kill and split: neither word");
    /* The longest line with power still fits run_boot's buffer. */
    char big[256];
    memset(big, 'b', sizeof(big));
    big[200] = 0;
    disk_config(&c, "disk,power", big);
    c.track_writes = big;
    c.dirorder_on = 1;
    c.dirorder = (uint64_t)INT64_MAX;
    c.preempt = "memory";
    c.cpus = 64;
    CHECK(run_opts_from_config(h, &c, &o, &err) == 0, "the longest words with power");
    n = run_kernel_cmdline(&o, line, sizeof(line));
    CHECK(n > 400 && (size_t)n == strlen(line) && strstr(line, " rewind.power") &&
              strstr(line, " rewind.cpus=64"),
          "the longest line with power fits in run_boot's buffer");
    /* A stored spec with power: read back, on the kernel's line, and its
     * `rewind run` line. */
    const char *spec_text =
        "{\"image\":\"" IMG "\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[],\"mem_mib\":256,"
        "\"seed\":0,\"epoch\":0,\"quantum_ns\":5000,\"perturb\":[[3,20,null,20,65536]],"
        "\"faults\":{\"disk_glob\":\"/var/lib/*\",\"kinds\":\"kill,power\",\"rate\":2},"
        "\"nodes\":[{\"name\":\"n1\",\"run\":\"serve 1\",\"restart\":\"serve 1\"}]}";
    json_t *spec = json_loads(spec_text, 0, NULL);
    struct run_stored st;
    memset(&st, 0, sizeof(st));
    char msg[512];
    CHECK(spec && run_opts_from_spec(spec, home, &st.o, &st.ins, msg, sizeof(msg)) == 0 &&
              st.o.sched.fault_kinds == ((1u << FAULT_KILL) | (1u << FAULT_POWER)) &&
              !strcmp(st.o.sched.fault_disk_glob, "/var/lib/*") && st.o.sched.fault_restart == 1,
          "power's glob read back");
    n = run_kernel_cmdline(&st.o, line, sizeof(line));
    CHECK(n > 0 && strstr(line, " rewind.diskglob=/var/lib/* rewind.power"),
          "and on the kernel's line");
    run_stored_free(&st);
    json_decref(spec);
    const char *no_glob =
        "{\"image\":\"" IMG "\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[],\"mem_mib\":256,"
        "\"seed\":0,\"epoch\":0,\"quantum_ns\":5000,"
        "\"faults\":{\"kinds\":\"kill,power\",\"rate\":2},"
        "\"nodes\":[{\"name\":\"n1\",\"run\":\"serve 1\"}]}";
    spec = json_loads(no_glob, 0, NULL);
    memset(&st, 0, sizeof(st));
    CHECK(spec && run_opts_from_spec(spec, home, &st.o, &st.ins, msg, sizeof(msg)) < 0,
          "a spec with power and no glob is refused");
    run_stored_free(&st);
    json_decref(spec);
    write_run(home, "00112233445566ff", spec_text);
    char *cl = NULL;
    int exact = 0;
    CHECK(rw_command_line(h, "00112233445566ff", &cl, &exact, &err) == 0 && cl &&
              strstr(cl, " --faults kill,power --fault-rate 2 --disk-glob '/var/lib/*'"),
          "--disk-glob after --faults with power");
    if (cl && !strstr(cl, "--disk-glob"))
        fprintf(stderr, "got %s\n", cl);
    free(cl);
    rw_home_close(h);
}

static void test_phase_codes(void)
{
    CHECK(run_phase_code(PH_IMAGE) == RW_EROOT, "image: 121");
    CHECK(run_phase_code(PH_ARTIFACTS) == RW_EKERNEL && run_phase_code(PH_BOOT) == RW_EKERNEL,
          "kernel: 122");
    CHECK(run_phase_code(PH_KVM) == RW_ENOKVM, "no KVM: 120");
    CHECK(run_phase_code(PH_KEYFRAME_FIND) == RW_EUSAGE && run_phase_code(PH_INSPECT) == RW_EUSAGE,
          "the user's run or step: 2");
    CHECK(run_phase_code(PH_LOCK) == RW_EINTERNAL && run_phase_code(PH_LOOP) == RW_EINTERNAL &&
              run_phase_code(PH_FINISH) == RW_EINTERNAL &&
              run_phase_code(PH_RESTORE) == RW_EINTERNAL,
          "the rest: 125");
}

static void test_holes(void)
{
    struct rw_run_config c;
    rw_run_config_init(&c);
    CHECK(!c.test, "no knobs by default");
    struct rw_test_knobs k = {0};
    CHECK(rw_test_hole(&k, "host-tsc") == 0 && k.holes && !k.snap_holes, "a run hole");
    CHECK(rw_test_hole(&k, "restore-no-tlb-flush") == 0 && k.snap_holes, "a keyframe hole");
    CHECK(rw_test_hole(&k, "nonsense") < 0, "an unknown name");
    CHECK(!strcmp(rw_outcome_word(RW_GUEST_ERROR), "guest-error") &&
              !strcmp(rw_schedule_strategy(2), "pct"),
          "words");
}

/* rw_machine_resume refuses a watchpoint the debug registers cannot hold
 * before it touches the machine (its caller is not trusted). */
static void test_resume_checks_watchpoints(void)
{
    struct rw_resume r = {.pid = 1, .nw = 1};
    struct rw_stop st;
    struct rw_error err;
    const struct {
        enum rw_watch_kind kind;
        unsigned len;
        uint64_t addr;
    } bad[] = {{RW_WATCH_WRITE, 64, 0x1000},
               {RW_WATCH_WRITE, 0, 0x1000},
               {RW_WATCH_ACCESS, 3, 0x1000},
               {RW_WATCH_WRITE, 8, 0x1004},
               {(enum rw_watch_kind)7, 4, 0x1000}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r.w[0] = (struct rw_watch){.addr = bad[i].addr, .kind = bad[i].kind, .len = bad[i].len};
        memset(&err, 0, sizeof(err));
        CHECK(rw_machine_resume(NULL, &r, &st, &err) < 0 && err.code == RW_EUSAGE &&
                  strstr(err.msg, "watchpoint"),
              "a bad watchpoint is refused with RW_EUSAGE");
    }
    r.nw = RW_DEBUG_POINTS + 1;
    CHECK(rw_machine_resume(NULL, &r, &st, &err) < 0 && err.code == RW_EUSAGE, "too many points");
}

int main(void)
{
    char home[] = "/tmp/runapi-XXXXXX";
    if (!mkdtemp(home))
        return 1;
    test_defaults();
    test_command_line(home);
    test_phase_codes();
    test_holes();
    test_resume_checks_watchpoints();
    test_restarts(home);
    test_disk_faults(home);
    test_power_faults(home);
    rundir_remove_tree(home);
    return unit_done();
}
