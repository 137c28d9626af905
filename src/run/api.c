/*
 * api: the public Running API's shared parts (include/rewind.h): configs
 * turned into run options, stored runs loaded as the options that recreate
 * them, and the `rewind run` command line of a stored run, built from the
 * same defaults table (src/input/defaults.c) so that `show` cannot drift
 * from `run`. The modes themselves are record.c, replay.c,
 * fork.c, inspect.c and explore/check.c.
 *
 * Invariants:
 *  1. A default is written once, in rw_defaults (src/input/defaults.c);
 *     rw_run_config_init and rw_command_line both read it.
 *  2. Every stored run a mode starts from has been resolved in the home and
 *     its kernel and init checked against its spec before a VM is made.
 *  3. No state here changes after it is first set (the engine is reentrant,
 *     docs/architecture.md): the default environment is constant, and the
 *     paths of the kernel and init (beside the running program, or under
 *     ../lib/rewind when installed) are computed once (pthread_once).
 *  4. The command line rw_command_line prints is shell text a user pastes:
 *     every word from a spec or the home's path is quoted (shq), and the
 *     image is printed only if it is an image name (64 hex digits; "?"
 *     when a manifest names none).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "input/defaults.h"
#include "input/expect.h"
#include "util/homepath.h"
#include "home/runnames.h"
#include "rewind_test.h"
#include "run/modes.h"
#include "input/patch.h"
#include "input/faults.h"
#include "input/nodes.h"
#include "trace/trace.h"
#include "util/check.h"
#include "util/fail.h"
#include "vmm/kvm.h"

#define fail util_fail

static int run_kernel_word_ok(const char *s, size_t max);

/* rw_run_config_init's env: never written (its callers replace it). */
static char *const run_default_env[3] = {RUN_PATH_ENV, RUN_HOME_ENV, NULL};

int run_usage(struct rw_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    err->code = RW_EUSAGE;
    return -1;
}

const char *rw_schedule_strategy(uint64_t schedule)
{
    return sched_strategy(schedule);
}

int64_t rw_default_epoch(int64_t t)
{
    return spec_default_epoch(t);
}

int rw_parse_epoch(const char *s, int64_t *out)
{
    return spec_parse_epoch(s, out);
}

void rw_run_config_init(struct rw_run_config *c)
{
    memset(c, 0, sizeof(*c));
    c->env = (char **)run_default_env; /* invariant 3 */
    c->cwd = rw_defaults.cwd;
    c->mem_mib = rw_defaults.mem_mib;
    c->seed = rw_defaults.seed;
    c->quantum_ns = rw_defaults.quantum_ns;
    c->epoch_s = rw_default_epoch((int64_t)time(NULL));
    c->spin_limit_s = rw_defaults.spin_limit_s;
    c->schedule_until = UINT64_MAX;
}

void rw_options_init(struct rw_options *o)
{
    memset(o, 0, sizeof(*o));
    o->schedule_until = UINT64_MAX;
    o->input_fd = -1;
    o->spin_limit_s = rw_defaults.spin_limit_s;
}

int rw_test_hole(struct rw_test_knobs *k, const char *name)
{
    static const struct {
        const char *name;
        uint64_t bit;
        unsigned snap;
    } holes[] = {
        {"host-tsc", REWIND_HOLE_HOST_TSC, 0},
        {"timer-at-host-exit", PLATFORM_HOLE_TIMER_AT_HOST_EXIT, 0},
        {"host-rng", PLATFORM_HOLE_HOST_RNG, 0},
        {"guest-hostile", REWIND_HOLE_HOSTILE, 0},
        {"mem-host-time", REWIND_HOLE_MEM_HOST_TIME, 0},
        {"mem-window-host-time", REWIND_HOLE_WINDOW_HOST_TIME, 0},
        {"mem-stall-host-time", REWIND_HOLE_STALL_HOST_TIME, 0},
        {"wait-host-time", REWIND_HOLE_WAIT_HOST_TIME, 0},
        {"refuse-go-on", PLATFORM_HOLE_REFUSE_GO_ON, 0},
        {"fault-host-time", PLATFORM_HOLE_FAULT_HOST_TIME, 0},
        {"fault-at-host-exit", PLATFORM_HOLE_FAULT_AT_HOST_EXIT, 0},
        {"kf-no-io-completion", 0, SNAP_HOLE_NO_IO_COMPLETION},
        {"restore-no-tlb-flush", 0, SNAP_HOLE_NO_TLB_FLUSH},
    };
    for (size_t i = 0; i < sizeof(holes) / sizeof(holes[0]); i++)
        if (!strcmp(name, holes[i].name)) {
            k->holes |= holes[i].bit;
            k->snap_holes |= holes[i].snap;
            return 0;
        }
    return -1;
}

void rw_interrupt(void)
{
    struct kvm_run *r = run_active_kvm_run;
    if (r)
        r->immediate_exit = 1;
}

/* The kernel and init beside the running program: written once by
 * run_beside_init, then only read (invariant 3). */
static char run_kernel_beside[PATH_MAX], run_init_beside[PATH_MAX];
static pthread_once_t run_beside_once = PTHREAD_ONCE_INIT;

static void run_beside_init(void)
{
    char exe[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        snprintf(run_kernel_beside, PATH_MAX, "kernel/vmlinux");
        snprintf(run_init_beside, PATH_MAX, "rewind-init");
        return;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    /* The build tree keeps them beside the program (build/kernel/vmlinux);
     * an installed rewind under PREFIX/lib/rewind beside PREFIX/bin
     * (docs/install.md). The build tree's layout wins when both exist. */
    snprintf(run_kernel_beside, PATH_MAX, "%s/kernel/vmlinux", exe);
    snprintf(run_init_beside, PATH_MAX, "%s/rewind-init", exe);
    if (access(run_kernel_beside, F_OK) == 0 || access(run_init_beside, F_OK) == 0)
        return;
    char up[PATH_MAX], real[PATH_MAX], lib[PATH_MAX - 32];
    snprintf(up, sizeof up, "%s/../lib/rewind", exe);
    if (!realpath(up, real) || strlen(real) >= sizeof lib)
        return;
    memcpy(lib, real, strlen(real) + 1);
    snprintf(run_kernel_beside, PATH_MAX, "%s/kernel/vmlinux", lib);
    snprintf(run_init_beside, PATH_MAX, "%s/rewind-init", lib);
}

/* $env if set, else the path beside the running program (constant storage). */
static const char *run_artifact(const char *env, const char *beside)
{
    const char *e = getenv(env);
    if (e && *e)
        return e;
    pthread_once(&run_beside_once, run_beside_init);
    return beside;
}

const char *rw_default_kernel(void)
{
    return run_artifact("REWIND_KERNEL", run_kernel_beside);
}

const char *rw_default_init(void)
{
    return run_artifact("REWIND_INIT", run_init_beside);
}

static int run_faults_from_config(const struct rw_run_config *c, struct run_opts *o,
                                  struct rw_error *err);

int run_opts_from_config(rw_home *h, const struct rw_run_config *c, struct run_opts *o,
                         struct rw_error *err)
{
    memset(o, 0, sizeof(*o));
    if (!c->root)
        return run_usage(err, "run needs --root ROOT (see rewind run --help)");
    if (!c->argv || !c->argv[0])
        return run_usage(err, "run needs a command after -- (see rewind run --help)");
    if (c->schedule_from >= c->schedule_until)
        return run_usage(err, "--schedule-from must be below --schedule-until");
    char why[200];
    if (c->mem_mib > rw_defaults.mem_max_mib ||
        kvm_mem_fits(c->mem_mib << 20, why, sizeof(why)) < 0)
        return run_usage(err, "--mem %llu MiB is more than this host can give: %s",
                         (unsigned long long)c->mem_mib,
                         c->mem_mib > rw_defaults.mem_max_mib ? "above the platform's limit" : why);
    if (c->schedule &&
        sched_push(&o->sched, c->schedule, c->schedule_from, c->schedule_until, c->schedule_from,
                   c->schedule_until == UINT64_MAX ? rw_defaults.pct_horizon
                                                   : c->schedule_until - c->schedule_from) < 0)
        return run_usage(err, "bad schedule window");
    o->root = c->root;
    o->argv = c->argv;
    o->env = c->env;
    o->cwd = c->cwd;
    o->mem_mib = c->mem_mib;
    o->seed = c->seed;
    o->quantum_ns = c->quantum_ns;
    o->epoch_s = c->epoch_s;
    o->home = rw_home_path(h);
    o->kernel = c->kernel ? c->kernel : rw_default_kernel();
    o->init = c->init ? c->init : rw_default_init();
    if (c->mem_mib < rw_defaults.mem_min_mib || c->mem_mib > rw_defaults.mem_max_mib)
        return run_usage(err, "--mem must be a number of MiB from %llu to %llu: %llu",
                         (unsigned long long)rw_defaults.mem_min_mib,
                         (unsigned long long)rw_defaults.mem_max_mib,
                         (unsigned long long)c->mem_mib);
    if (c->name && !runnames_valid(c->name))
        return run_usage(err,
                         "--name must be 1..%d bytes, without '/' or control characters, "
                         "not starting with '@' or '.', not shaped like a run id: %s",
                         RUNNAMES_LEN, c->name);
    o->name = c->name;
    o->show_console = c->show_console;
    o->quiet = c->quiet;
    o->obs = &c->observer;
    o->abort = c->abort;
    o->state_log = c->state_log;
    o->no_keyframes = c->no_keyframes;
    o->kf_every = c->keyframe_every;
    o->test_holes = c->test ? c->test->holes : 0;
    o->snap_holes = c->test ? c->test->snap_holes : 0;
    o->max_trace_mb = c->max_trace_mb;
    o->max_disk_mb = c->max_disk_mb;
    o->spin_limit_s = c->spin_limit_s;
    o->expect = c->expect && c->expect[0] ? c->expect : NULL;
    o->property = c->property;
    for (size_t i = 0; o->expect && o->expect[i]; i++) {
        char why[300];
        if (expect_valid(o->expect[i], why, sizeof(why)) < 0)
            return run_usage(err, "--expect %s: %s", o->expect[i], why);
    }
    if (o->property && !o->property[0])
        return run_usage(err, "--property needs a command");
    o->dirorder_on = c->dirorder_on;
    o->dirorder = c->dirorder;
    o->track_writes = c->track_writes;
    o->collect = c->collect;
    o->nix_drv = c->nix_drv;
    if (c->preempt && strcmp(c->preempt, "memory") && strcmp(c->preempt, "off"))
        return run_usage(err, "--preempt takes memory or off: %s", c->preempt);
    o->preempt_memory = c->preempt && !strcmp(c->preempt, "memory");
    if (c->cpus > RW_CPUS_MAX)
        return run_usage(err, "--cpus takes 1 to %u: %u", RW_CPUS_MAX, c->cpus);
    o->cpus = c->cpus ? c->cpus : 1;
    if (o->dirorder_on && o->dirorder > (uint64_t)INT64_MAX)
        return run_usage(err, "--dirorder must be below 2^63: %llu",
                         (unsigned long long)o->dirorder);
    if (o->track_writes && !run_kernel_word_ok(o->track_writes, 200))
        return run_usage(err,
                         "--track-writes needs a glob of 1..200 printable bytes "
                         "without spaces or quotes: %s",
                         o->track_writes);
    if (o->collect && (!o->collect[0] || strlen(o->collect) > 1024 || strchr(o->collect, '\n')))
        return run_usage(err, "--collect needs a path of 1..1024 bytes without newlines");
    if (c->nodes && nodes_valid(c->nodes, why, sizeof(why)) < 0)
        return run_usage(err, "%s", why);
    o->nodes = c->nodes && c->nodes[0] ? c->nodes : NULL;
    if (c->restarts && nodes_restarts_valid(o->nodes, c->restarts, why, sizeof(why)) < 0)
        return run_usage(err, "%s", why);
    o->restarts = c->restarts && c->restarts[0] ? c->restarts : NULL;
    return run_faults_from_config(c, o, err);
}

_Static_assert(SCHED_DISK_GLOB_MAX == 200, "include/rewind.h: a disk_glob has 1..200 bytes");

/* --faults, --fault-rate and --disk-glob (docs/faults.md): the fault
 * settings of o->sched; the disk glob is set exactly when the kinds have
 * disk or power, "*" unless given (faults.h invariant 5). */
static int run_faults_from_config(const struct rw_run_config *c, struct run_opts *o,
                                  struct rw_error *err)
{
    size_t nn = 0;
    while (o->nodes && o->nodes[nn])
        nn++;
    o->sched.fault_nodes = (uint32_t)nn;
    o->sched.fault_restart = nodes_restart_mask(o->nodes, o->restarts);
    o->sched.fault_disk_glob[0] = 0;
    if (!c->faults) {
        if (c->fault_rate)
            return run_usage(err, "--fault-rate needs --faults");
        if (c->disk_glob)
            return run_usage(err, "--disk-glob needs --faults with disk or power");
        return 0;
    }
    char why[200];
    if (faults_parse(c->faults, &o->sched.fault_kinds, why, sizeof(why)) < 0)
        return run_usage(err, "%s", why);
    if (!nn)
        return run_usage(err, "--faults needs nodes to inject them into (--node NAME=COMMAND)");
    if (c->fault_rate > FAULT_RATE_MAX)
        return run_usage(err, "--fault-rate takes 1 to %u: %u", FAULT_RATE_MAX, c->fault_rate);
    o->sched.fault_rate = c->fault_rate ? c->fault_rate : FAULT_RATE_DEFAULT;
    int glob = (o->sched.fault_kinds & FAULT_KINDS_GLOB) != 0;
    if (c->disk_glob && !glob)
        return run_usage(err, "--disk-glob needs --faults with disk or power: %s", c->faults);
    if (c->disk_glob && !run_kernel_word_ok(c->disk_glob, SCHED_DISK_GLOB_MAX))
        return run_usage(err,
                         "--disk-glob needs a glob of 1..%d printable bytes without spaces or "
                         "quotes: %s",
                         SCHED_DISK_GLOB_MAX, c->disk_glob);
    if (glob)
        snprintf(o->sched.fault_disk_glob, sizeof(o->sched.fault_disk_glob), "%s",
                 c->disk_glob ? c->disk_glob : FAULT_DISK_GLOB_DEFAULT);
    RW_ASSERT(!glob || faults_disk_glob_valid(o->sched.fault_disk_glob)); /* invariant 5 */
    return 0;
}

/* A word the guest kernel's command line can carry unquoted. */
static int run_kernel_word_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\'')
            return 0;
    return 1;
}

static char **strv_from_json(json_t *a)
{
    size_t n = json_array_size(a), i;
    char **v = calloc(n + 1, sizeof(char *));
    json_t *x;
    if (!v)
        return NULL;
    json_array_foreach(a, i, x)
    {
        const char *s = json_string_value(x);
        v[i] = strdup(s ? s : "");
    }
    return v;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

int run_opts_from_spec(json_t *spec, const char *home, struct run_opts *o, struct run_inspect *ins,
                       char *err, size_t errlen)
{
    const char *image = json_string_value(json_object_get(spec, "image"));
    const char *cwd = json_string_value(json_object_get(spec, "cwd"));
    json_t *argv = json_object_get(spec, "argv"), *env = json_object_get(spec, "env");
    if (!image || !cwd || !json_is_array(argv) || !json_array_size(argv) || !json_is_array(env))
        return fail(err, errlen, "the run's spec is incomplete or corrupt");
    json_t *in = json_object_get(spec, "inspect");
    memset(ins, 0, sizeof(*ins));
    if (in) {
        const char *k = json_string_value(json_object_get(in, "kind"));
        if (!k || strcmp(k, "shell"))
            return fail(err, errlen, "the run's spec has an unknown inspection");
        ins->kind = "shell";
        ins->pid = (uint64_t)json_integer_value(json_object_get(in, "pid"));
        ins->at = (uint64_t)json_integer_value(json_object_get(in, "at"));
    }
    if (spec_parse_perturb(spec, &o->sched) < 0)
        return fail(err, errlen, "the run's spec has a malformed perturb list");
    if (json_integer_value(json_object_get(spec, "test_holes")))
        return fail(err, errlen, "this run was made with a test hole open; it cannot be replayed");
    json_int_t mem = json_integer_value(json_object_get(spec, "mem_mib"));
    if (mem < (json_int_t)rw_defaults.mem_min_mib || mem > (json_int_t)rw_defaults.mem_max_mib)
        return fail(err, errlen, "the run's spec asks for %lld MiB of guest RAM (%llu..%llu)",
                    (long long)mem, (unsigned long long)rw_defaults.mem_min_mib,
                    (unsigned long long)rw_defaults.mem_max_mib); /* no mem_mib << 20 wrap */
    char root[4200];
    if (home_path(root, sizeof(root), home, HOME_IMAGES, image, NULL) < 0)
        return fail(err, errlen, "the run's spec names a bad image: %s", image);
    if (access(root, R_OK) != 0)
        return fail(err, errlen, "the root image %s of this run is gone (rewind gc?)", root);
    o->root = strdup(root);
    o->cwd = strdup(cwd);
    o->argv = strv_from_json(argv);
    o->env = strv_from_json(env);
    o->mem_mib = (uint64_t)json_integer_value(json_object_get(spec, "mem_mib"));
    o->seed = (uint64_t)json_integer_value(json_object_get(spec, "seed"));
    o->epoch_s = (int64_t)json_integer_value(json_object_get(spec, "epoch"));
    o->quantum_ns = (uint64_t)json_integer_value(json_object_get(spec, "quantum_ns"));
    json_t *ex = json_object_get(spec, "expect");
    json_t *pr = json_object_get(spec, "property");
    if ((ex && !json_is_array(ex)) || (pr && !json_is_string(pr)))
        return fail(err, errlen, "the run's spec has malformed properties");
    o->expect = ex && json_array_size(ex) ? strv_from_json(ex) : NULL;
    o->property = pr ? strdup(json_string_value(pr)) : NULL;
    o->home = home;
    json_t *dord = json_object_get(spec, "dirorder");
    json_t *tw = json_object_get(spec, "track_writes"), *col = json_object_get(spec, "collect");
    if ((dord && !json_is_integer(dord)) || (tw && !json_is_string(tw)) ||
        (col && !json_is_string(col)) || (tw && !run_kernel_word_ok(json_string_value(tw), 200)))
        return fail(err, errlen,
                    "the run's spec has a malformed dirorder, track_writes or collect");
    o->dirorder_on = dord != NULL;
    o->dirorder = (uint64_t)json_integer_value(dord);
    json_t *pre = json_object_get(spec, "preempt");
    if (pre && (!json_is_string(pre) || strcmp(json_string_value(pre), "memory")))
        return fail(err, errlen, "the run's spec has a malformed preempt");
    o->preempt_memory = pre != NULL;
    json_t *cpus = json_object_get(spec, "cpus");
    if (cpus && (!json_is_integer(cpus) || json_integer_value(cpus) < 2 ||
                 json_integer_value(cpus) > RW_CPUS_MAX))
        return fail(err, errlen, "the run's spec has a malformed cpus");
    o->cpus = cpus ? (unsigned)json_integer_value(cpus) : 1;
    o->track_writes = tw ? strdup(json_string_value(tw)) : NULL;
    o->collect = col ? strdup(json_string_value(col)) : NULL;
    if (nodes_from_json(json_object_get(spec, "nodes"), &o->nodes, &o->restarts) < 0)
        return fail(err, errlen, "the run's spec has a malformed nodes list");
    o->sched.fault_nodes = 0;
    while (o->nodes && o->nodes[o->sched.fault_nodes])
        o->sched.fault_nodes++;
    o->sched.fault_restart = nodes_restart_mask(o->nodes, o->restarts);
    if (o->sched.fault_kinds && !o->sched.fault_nodes)
        return fail(err, errlen, "the run's spec has faults but no nodes");
    json_t *nd = json_object_get(spec, "nix_drv");
    if (nd && !json_is_string(nd))
        return fail(err, errlen, "the run's spec has a malformed nix_drv");
    o->nix_drv = nd ? strdup(json_string_value(nd)) : NULL;
    struct rw_patch *patch;
    if (patch_from_json(json_object_get(spec, "gdb_writes"), &patch, err, errlen) < 0)
        return -1;
    o->patch = patch;
    if ((ex && json_array_size(ex) && !o->expect) || (pr && !o->property))
        return fail(err, errlen, "out of memory");
    if (!o->root || !o->cwd || !o->argv || !o->env || !o->mem_mib || !o->quantum_ns)
        return fail(err, errlen, "the run's spec is incomplete or corrupt");
    return 0;
}

int run_check_artifacts(const struct run_opts *o, json_t *spec, char *err, size_t errlen)
{
    const char *want_k = json_string_value(json_object_get(spec, "kernel"));
    const char *want_i = json_string_value(json_object_get(spec, "init"));
    char k[65], i[65], why[512];
    hash256 h;
    if (image_hash_file(o->kernel, o->home, &h, why, sizeof(why)) < 0)
        return fail(err, errlen, "cannot read the guest kernel: %s", why);
    hash_hex(&h, k);
    if (image_hash_file(o->init, o->home, &h, why, sizeof(why)) < 0)
        return fail(err, errlen, "cannot read the rewind-init: %s", why);
    hash_hex(&h, i);
    if (!want_k || strcmp(k, want_k))
        return fail(err, errlen, "this run used guest kernel %.16s; %s is %.16s",
                    want_k ? want_k : "?", o->kernel, k);
    if (!want_i || strcmp(i, want_i))
        return fail(err, errlen, "this run used rewind-init %.16s; %s is %.16s",
                    want_i ? want_i : "?", o->init, i);
    return 0;
}

static json_t *load_manifest(const char *home, const char *name, struct rw_error *err)
{
    char path[4200];
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "manifest.json") < 0) {
        run_usage(err, "bad run name %s", name);
        return NULL;
    }
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m || !json_is_object(m)) {
        run_usage(err, "run %s: manifest %s is corrupt (%s)", name, path, je.text);
        json_decref(m);
        return NULL;
    }
    return m;
}

int run_stored_load(const char *home, const char *name, const char *kernel, const char *init,
                    struct run_stored *st, struct rw_error *err)
{
    memset(st, 0, sizeof(*st));
    snprintf(st->name, sizeof(st->name), "%s", name);
    json_t *m = load_manifest(home, name, err);
    if (!m)
        return -1;
    json_t *spec = json_object_get(m, "spec");
    const char *par = json_string_value(json_object_get(m, "parent"));
    /* The parent becomes runs/<parent>/... (util/homepath.h invariant 2): a stored
     * run's name, never a staging directory or a path. */
    if (par && (!home_safe_name(par) || par[0] == '.' || strlen(par) >= sizeof(st->parent))) {
        json_decref(m);
        return run_usage(err, "run %s: its manifest names a bad parent run", name);
    }
    snprintf(st->parent, sizeof(st->parent), "%s", par ? par : "");
    st->steps = (uint64_t)json_integer_value(json_object_get(m, "steps"));
    int rc = run_opts_from_spec(spec, home, &st->o, &st->ins, err->msg, sizeof(err->msg));
    if (rc == 0) {
        st->o.kernel = kernel ? kernel : rw_default_kernel();
        st->o.init = init ? init : rw_default_init();
        st->o.kf_every = (uint64_t)json_integer_value(json_object_get(m, "keyframe_every"));
        st->o.quiet = 1;
        char why[900];
        rc = run_check_artifacts(&st->o, spec, why, sizeof(why));
        if (rc < 0)
            snprintf(err->msg, sizeof(err->msg), "cannot replay: %s", why);
    }
    json_decref(m);
    err->code = RW_EUSAGE;
    if (rc < 0)
        run_stored_free(st);
    return rc;
}

void run_stored_runtime(struct run_opts *o, const struct rw_options *op)
{
    o->quiet = 0;
    o->obs = &op->observer;
    o->abort = op->abort;
    o->max_trace_mb = op->max_trace_mb;
    o->max_disk_mb = op->max_disk_mb;
    o->spin_limit_s = op->spin_limit_s;
}

void run_stored_free(struct run_stored *st)
{
    free((char *)st->o.root);
    free((char *)st->o.cwd);
    strv_free(st->o.argv);
    strv_free(st->o.env);
    st->o.root = st->o.cwd = NULL;
    st->o.argv = st->o.env = NULL;
    strv_free(st->o.expect);
    free((char *)st->o.property);
    free((char *)st->o.track_writes);
    free((char *)st->o.collect);
    free((char *)st->o.nix_drv);
    nodes_free(st->o.nodes);
    nodes_free(st->o.restarts);
    st->o.nodes = st->o.restarts = NULL;
    free((struct rw_patch *)st->o.patch);
    st->o.patch = NULL;
    st->o.track_writes = st->o.collect = st->o.nix_drv = NULL;
    st->o.expect = NULL;
    st->o.property = NULL;
}

uint64_t run_job_step(const char *home, const char *name, int exec)
{
    char path[4200];
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "trace") < 0)
        return 0;
    struct trace_reader r;
    if (trace_open_read(&r, path) != 0)
        return 0;
    struct trace_entry e;
    uint64_t at = 0;
    int started = 0;
    while (trace_next(&r, &e) == 1) {
        if (e.rec.kind == REWIND_REC_INIT && e.rec.aux == REWIND_INIT_JOB_START) {
            started = 1;
            if (!exec) {
                at = e.step;
                break;
            }
        } else if (started && e.rec.kind == REWIND_REC_EXEC) {
            at = e.step;
            break;
        }
    }
    trace_close_read(&r);
    return at;
}

int run_stored_at(rw_home *h, const char *ref, uint64_t step, int inspect,
                  const struct rw_options *op, struct run_stored *st, struct rw_error *err)
{
    const char *home = rw_home_path(h);
    char name[RW_ID_MAX];
    memset(st, 0, sizeof(*st));
    if (rw_resolve(h, ref, name, err) < 0)
        return -1;
    json_t *m = load_manifest(home, name, err);
    if (!m)
        return -1;
    uint64_t steps = (uint64_t)json_integer_value(json_object_get(m, "steps"));
    json_decref(m);
    if (step >= steps)
        return run_usage(err, "run %s ends at step %llu; STEP must be below that", ref,
                         (unsigned long long)steps);
    if (inspect) {
        uint64_t first = run_job_step(home, name, 1);
        if (!first)
            return run_usage(err, "run %s never executed its command: nothing to inspect", ref);
        if (step < first)
            return run_usage(err,
                             "step %llu is before the job's command runs (step %llu); pick "
                             "a step from %llu on",
                             (unsigned long long)step, (unsigned long long)first,
                             (unsigned long long)first);
    }
    if (run_stored_load(home, name, op->kernel, op->init, st, err) < 0) {
        char why[sizeof(err->msg)];
        const char *w = err->msg;
        if (!strncmp(w, "cannot replay: ", 15))
            w += 15;
        snprintf(why, sizeof(why), "%s", w);
        return run_usage(err, "run %s: %.900s", ref, why);
    }
    RW_ASSERT(st->steps == steps); /* invariant 2: the run loaded is the run checked */
    return 0;
}

/* Append s to f, quoted for a POSIX shell if it needs it. */
static void shq(FILE *f, const char *s)
{
    if (*s &&
        strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
            strlen(s)) {
        fputs(s, f);
        return;
    }
    int ctl = 0;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++)
        ctl |= *u < 0x20 || *u == 0x7f;
    if (ctl) { /* $'...': a control character is written as \xNN, never raw (inv. 4) */
        fputs("$'", f);
        for (const unsigned char *u = (const unsigned char *)s; *u; u++)
            if (*u < 0x20 || *u == 0x7f)
                fprintf(f, "\\x%02x", *u);
            else if (*u == '\'' || *u == '\\')
                fprintf(f, "\\%c", *u);
            else
                fputc(*u, f);
        fputc('\'', f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

/* rw_command_line's --schedule flags (when the perturbation is what they
 * say), --faults and --disk-glob (docs/faults.md; the kinds and the glob
 * were checked by spec_parse_perturb). */
static void command_line_schedule(FILE *f, const struct sched *sc, int plain)
{
    if (sc->n == 1 && plain) {
        fprintf(f, " --schedule %llu --schedule-from %llu", (unsigned long long)sc->seg[0].schedule,
                (unsigned long long)sc->seg[0].from);
        if (sc->seg[0].until != UINT64_MAX)
            fprintf(f, " --schedule-until %llu", (unsigned long long)sc->seg[0].until);
    }
    if (sc->fault_kinds) { /* docs/faults.md; valid: spec_parse_perturb checked the kinds */
        char k[64];
        faults_format(sc->fault_kinds, k, sizeof(k));
        fprintf(f, " --faults %s --fault-rate %u", k, sc->fault_rate);
    }
    if (sc->fault_kinds & FAULT_KINDS_GLOB) { /* and the glob (faults.h invariant 5) */
        fputs(" --disk-glob ", f);
        shq(f, sc->fault_disk_glob);
    }
}

/* rw_command_line's flag NAME=COMMAND for each node whose object has key
 * (docs/faults.md: "run" for --node, "restart" for --restart). */
static void command_line_nodes(FILE *f, json_t *nodes, const char *key, const char *flag)
{
    size_t i;
    json_t *v;
    json_array_foreach(nodes, i, v)
    {
        char *e = NULL;
        const char *nm = json_string_value(json_object_get(v, "name"));
        const char *cmd = json_string_value(json_object_get(v, key));
        if (nm && cmd && asprintf(&e, "%s=%s", nm, cmd) >= 0) {
            fputs(flag, f);
            shq(f, e);
        }
        free(e);
    }
}

int rw_command_line(rw_home *h, const char *ref, char **line, int *exact, struct rw_error *err)
{
    char name[RW_ID_MAX];
    *line = NULL;
    if (rw_resolve(h, ref, name, err) < 0)
        return -1;
    json_t *m = load_manifest(rw_home_path(h), name, err);
    if (!m)
        return -1;
    json_t *spec = json_object_get(m, "spec");
    struct sched sc = {0};
    int plain = 1; /* the perturbation is what --schedule flags say */
    if (spec_parse_perturb(spec, &sc) == 0)
        plain = sc.n == 0 ||
                (sc.n == 1 && sc.seg[0].origin == sc.seg[0].from &&
                 sc.seg[0].span_from == sc.seg[0].from && sc.seg[0].span_until == sc.seg[0].until &&
                 sc.seg[0].horizon == (sc.seg[0].until == UINT64_MAX
                                           ? rw_defaults.pct_horizon
                                           : sc.seg[0].until - sc.seg[0].from));
    size_t len;
    FILE *f = open_memstream(line, &len);
    if (!f) {
        json_decref(m);
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return -1;
    }
    const char *img = json_string_value(json_object_get(spec, "image"));
    char root[4200];
    /* an image is named by its hash: 64 hex digits, nothing a shell reads
     * as more (an archive's spec is untrusted; invariant 4) */
    if ((img && (strlen(img) != 64 || strspn(img, "0123456789abcdef") != 64)) ||
        home_path(root, sizeof(root), rw_home_path(h), HOME_IMAGES, img ? img : "?", NULL) < 0) {
        fclose(f);
        free(*line);
        *line = NULL;
        json_decref(m);
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "run %s: its spec names a bad image", name);
        return -1;
    }
    fputs("rewind run --root ", f);
    shq(f, root); /* the home's path may hold anything */
    fputs(" --cwd ", f);
    const char *cwd = json_string_value(json_object_get(spec, "cwd"));
    shq(f, cwd ? cwd : "");
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(spec, "env"), i, v)
    {
        const char *e = json_string_value(v);
        if (!e || !strcmp(e, rw_defaults.path_env) || !strcmp(e, rw_defaults.home_env))
            continue;
        fputs(" -e ", f);
        shq(f, e);
    }
    fprintf(f, " --mem %lld --seed %lld --epoch %lld --quantum %lld",
            (long long)json_integer_value(json_object_get(spec, "mem_mib")),
            (long long)json_integer_value(json_object_get(spec, "seed")),
            (long long)json_integer_value(json_object_get(spec, "epoch")),
            (long long)json_integer_value(json_object_get(spec, "quantum_ns")));
    command_line_schedule(f, &sc, plain);
    json_array_foreach(json_object_get(spec, "expect"), i, v)
    {
        fputs(" --expect ", f);
        shq(f, json_string_value(v) ? json_string_value(v) : "");
    }
    if (json_is_string(json_object_get(spec, "property"))) {
        fputs(" --property ", f);
        shq(f, json_string_value(json_object_get(spec, "property")));
    }
    if (json_is_integer(json_object_get(spec, "dirorder")))
        fprintf(f, " --dirorder %lld",
                (long long)json_integer_value(json_object_get(spec, "dirorder")));
    if (json_is_string(json_object_get(spec, "preempt")))
        fputs(" --preempt memory", f);
    if (json_is_integer(json_object_get(spec, "cpus")))
        fprintf(f, " --cpus %lld", (long long)json_integer_value(json_object_get(spec, "cpus")));
    if (json_is_string(json_object_get(spec, "track_writes"))) {
        fputs(" --track-writes ", f);
        shq(f, json_string_value(json_object_get(spec, "track_writes")));
    }
    if (json_is_string(json_object_get(spec, "collect"))) {
        fputs(" --collect ", f);
        shq(f, json_string_value(json_object_get(spec, "collect")));
    }
    command_line_nodes(f, json_object_get(spec, "nodes"), "run", " --node ");
    command_line_nodes(f, json_object_get(spec, "nodes"), "restart", " --restart ");
    fputs(" --", f);
    json_array_foreach(json_object_get(spec, "argv"), i, v)
    {
        fputc(' ', f);
        shq(f, json_string_value(v) ? json_string_value(v) : "");
    }
    json_decref(m);
    if (fclose(f) != 0) {
        free(*line);
        *line = NULL;
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return -1;
    }
    *exact = plain;
    return 0;
}
