/*
 * nix build: `rewind nix INSTALLABLE` (rw_nix_build in include/rewind.h,
 * docs/nix.md). The user's nix evaluates the installable to a derivation
 * and realises its inputs on the host; the input closure becomes the VM's
 * root; the builder runs there with the derivation's environment and
 * arguments, /build as its directory and no network; its output is
 * collected (src/run/collect.c) and hashed as Nix does (NAR, nar.c), then
 * compared with the store's copy.
 *
 * Invariants:
 *  1. The root holds exactly the closure's store paths (at their store
 *     paths), /build, and the few directories and files rewind-init and a
 *     builder need (/dev, /proc, /sys, /tmp, /etc/passwd, /etc/group); no
 *     file of the host outside the closure.
 *  2. The derivation (its .drv path, a function of its content) is part of
 *     the run's spec, so the run id is a function of the derivation.
 *  3. Nix is only asked through its command line (nix-instantiate, nix
 *     show-derivation, nix-store); its output is parsed as untrusted text
 *     (store paths checked: absolute, no "..", no control bytes).
 *  4. The temporary root is removed whatever happens; the image made from
 *     it is kept in the home like any root's.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/apierr.h"
#include "nix/nar.h"
#include "rewind.h"
#include "util/check.h"
#include "util/io.h"
#include "util/spawn.h"

extern char **environ;

#define OUT_MAX (64u << 20)
#define CLOSURE_MAX 4096

/* Run argv (PATH lookup), its stdout into *out (NUL-terminated, malloc'd).
 * Its stderr is kept aside and copied to ours (the last 4 KiB) only when it
 * fails and !quiet: nix's warnings ("you don't have Internet access", ...)
 * do not depend on the build and stay out of the way. Returns the exit
 * status (0..255, 255 if it could not run or was killed). */
static int cmd(char *const argv[], char **out, int quiet)
{
    int pfd[2] = {-1, -1};
    *out = NULL;
    int efd = memfd_create("nix-stderr", MFD_CLOEXEC);
    if (efd < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
        if (efd >= 0)
            close(efd);
        return 255;
    }
    pid_t pid;
    int rc = spawn_start(argv, NULL, SPAWN_KEEP, pfd[1], efd, &pid);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        close(efd);
        return 255;
    }
    size_t n = 0, cap = 4096;
    char *b = malloc(cap);
    ssize_t k;
    while (b && (k = read(pfd[0], b + n, cap - n - 1)) != 0) {
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break;
        n += (size_t)k;
        if (n + 1 == cap && cap < OUT_MAX) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        } else if (n + 1 == cap)
            break;
    }
    close(pfd[0]);
    int st = 255 << 8;
    if (spawn_wait(pid, &st) < 0)
        st = 255 << 8;
    if (b)
        b[n] = 0;
    *out = b;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
    if (code != 0 && !quiet) {
        char tail[4096];
        off_t end = lseek(efd, 0, SEEK_END);
        off_t from = end > (off_t)sizeof(tail) ? end - (off_t)sizeof(tail) : 0;
        ssize_t got = end > 0 ? pread(efd, tail, (size_t)(end - from), from) : 0;
        if (got > 0 && write(2, tail, (size_t)got) < 0) {
            /* our stderr is gone: nothing to tell */
        }
    }
    close(efd);
    return code;
}

/* Invariant 3: an absolute path without "..", control bytes or quotes. */
static int store_path_ok(const char *p)
{
    if (!p || p[0] != '/' || strlen(p) > 1000 || strstr(p, "/../") || strstr(p, "/./"))
        return 0;
    for (const char *s = p; *s; s++)
        if ((unsigned char)*s < 33 || *s == 127 || *s == '\'' || *s == '"' || *s == '\\')
            return 0;
    size_t l = strlen(p);
    return !(l >= 3 && !strcmp(p + l - 3, "/.."));
}

static char *last_line(char *s)
{
    if (!s)
        return NULL;
    size_t l = strlen(s);
    while (l && (s[l - 1] == '\n' || s[l - 1] == '\r'))
        s[--l] = 0;
    char *nl = strrchr(s, '\n');
    return nl ? nl + 1 : s;
}

/* The .drv path of the installable. */
static int find_drv(const struct rw_nix_config *c, char *drv, size_t n, struct rw_error *err)
{
    char *out = NULL;
    int st;
    const char *inst = c->installable;
    if (c->file) {
        char *argv[] = {"nix-instantiate", (char *)c->file, "-A", (char *)(c->attr ? c->attr : ""),
                        NULL};
        if (!c->attr)
            argv[2] = NULL;
        st = cmd(argv, &out, 0);
    } else if (inst && strlen(inst) > 4 && !strcmp(inst + strlen(inst) - 4, ".drv")) {
        snprintf(drv, n, "%s", inst);
        return store_path_ok(drv) ? 0 : apierr_set(err, RW_EUSAGE, "not a store path: %s", inst);
    } else if (inst && strchr(inst, '#')) {
        char expr[1200];
        snprintf(expr, sizeof(expr), "%s.drvPath", inst);
        char *argv[] = {
            "nix", "--extra-experimental-features", "nix-command flakes", "eval", "--raw", expr,
            NULL};
        st = cmd(argv, &out, 0);
    } else {
        return apierr_set(
            err, RW_EUSAGE,
            "an installable is .#attr, FLAKE#attr, a .drv path, or -f FILE -A attr: %s",
            inst ? inst : "(none)");
    }
    char *l = last_line(out);
    if (st != 0 || !l || !store_path_ok(l) || strlen(l) >= n) {
        free(out);
        return apierr_set(err, RW_EUSAGE, "nix could not evaluate %s (exit %d)",
                          c->file ? c->file : inst, st);
    }
    snprintf(drv, n, "%s", l);
    free(out);
    return 0;
}

static int run_tool(char *const argv[], int quiet)
{
    char *out = NULL;
    int st = cmd(argv, &out, quiet);
    free(out);
    return st;
}

static int put_file(const char *root, const char *rel, const char *text)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s/%s", root, rel) >= (int)sizeof(p))
        return -1;
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* Invariant 1: the closure at its store paths, and what init needs. */
static int make_root(const char *root, char *closure, struct rw_error *err)
{
    static const char *dirs[] = {"dev", "proc", "sys", "tmp", "build", "etc", "bin"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        if (snprintf(p, sizeof(p), "%s/%s", root, dirs[i]) >= (int)sizeof(p) || io_mkdir_p(p) < 0)
            return apierr_set(err, RW_EINTERNAL, "cannot make %s: %s", p, strerror(errno));
    }
    if (snprintf(p, sizeof(p), "%s/tmp", root) < (int)sizeof(p))
        chmod(p, 01777);
    if (put_file(root, "etc/passwd",
                 "root:x:0:0:Nix build user:/build:/noshell\nnixbld:x:1000:100:Nix build "
                 "user:/build:/noshell\nnobody:x:65534:65534:Nobody:/:/noshell\n") < 0 ||
        put_file(root, "etc/group", "root:x:0:\nnixbld:!:100:\nnogroup:x:65534:\n") < 0)
        return apierr_set(err, RW_EINTERNAL, "cannot write %s/etc", root);
    size_t count = 0;
    for (char *save = NULL, *sp = strtok_r(closure, "\n", &save); sp;
         sp = strtok_r(NULL, "\n", &save)) {
        if (!store_path_ok(sp) || ++count > CLOSURE_MAX)
            return apierr_set(err, RW_EINTERNAL, "nix-store named a bad store path: %.200s", sp);
        char dst[PATH_MAX], parent[PATH_MAX];
        if (snprintf(dst, sizeof(dst), "%s%s", root, sp) >= (int)sizeof(dst) ||
            snprintf(parent, sizeof(parent), "%s", dst) >= (int)sizeof(parent))
            return apierr_set(err, RW_EINTERNAL, "a store path is too long: %.200s", sp);
        *strrchr(parent, '/') = 0;
        if (io_mkdir_p(parent) < 0)
            return apierr_set(err, RW_EINTERNAL, "cannot make %s: %s", parent, strerror(errno));
        char *argv[] = {"cp", "-a", "--", sp, dst, NULL};
        if (run_tool(argv, 0) != 0)
            return apierr_set(err, RW_EINTERNAL, "cannot copy %s into the root", sp);
    }
    return 0;
}

static void remove_tree(const char *dir)
{
    char *argv[] = {"rm", "-rf", "--", (char *)dir, NULL};
    run_tool(argv, 1);
}

/* The NAR hash of run id's collected output. */
static int nar_of_run(rw_home *h, const char *id, char out[80], struct rw_error *err)
{
    struct rw_collected *v = NULL;
    size_t n = 0;
    char status[256];
    if (rw_collect_list(h, id, &v, &n, status, sizeof(status), err) < 0)
        return -1;
    if (strcmp(status, "ok")) {
        free(v);
        return apierr_set(err, RW_EINTERNAL, "the output was not collected whole: %s", status);
    }
    struct nix_node *nodes = calloc(n ? n : 1, sizeof(*nodes));
    void **data = calloc(n ? n : 1, sizeof(*data));
    int rc = nodes && data ? 0 : apierr_set(err, RW_EINTERNAL, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t len = 0;
        if (v[i].type != 'd' && rw_collect_read(h, id, v[i].path, &data[i], &len, err) < 0)
            rc = -1;
        nodes[i] = (struct nix_node){v[i].path, v[i].type, (v[i].mode & 0100) != 0, data[i], len};
    }
    hash256 hh;
    if (rc == 0 && nix_nar_hash(nodes, n, &hh) < 0)
        rc = apierr_set(err, RW_EINTERNAL, "the collected output is not a tree Nix can archive");
    if (rc == 0) {
        char b32[60];
        nix_base32(hh.b, 32, b32);
        snprintf(out, 80, "sha256:%s", b32);
    }
    for (size_t i = 0; data && i < n; i++)
        free(data[i]);
    free(data);
    free(nodes);
    free(v);
    return rc;
}

void rw_nix_config_init(struct rw_nix_config *c)
{
    memset(c, 0, sizeof(*c));
    rw_run_config_init(&c->run);
}

void rw_nix_job_free(struct rw_nix_job *j)
{
    if (!j)
        return;
    if (j->root[0])
        remove_tree(j->root); /* invariant 4 */
    j->root[0] = 0;
    for (size_t i = 0; j->argv && j->argv[i]; i++)
        free(j->argv[i]);
    for (size_t i = 0; j->env && j->env[i]; i++)
        free(j->env[i]);
    free(j->argv);
    free(j->env);
    j->argv = j->env = NULL;
}

/* input_closure with rq, the command lines' room (CLOSURE_MAX + 8). */
static int input_closure_in(json_t *d, const char *drv, char **closure, struct rw_error *err,
                            char **rq)
{
    size_t nq = 0;
    rq[nq++] = "nix-store";
    rq[nq++] = "--realise";
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(d, "inputDrvs"), k, v)
    {
        if (!store_path_ok(k) || nq >= CLOSURE_MAX)
            return apierr_set(err, RW_EUSAGE, "%s names a bad input", drv);
        rq[nq++] = (char *)k;
    }
    rq[nq] = NULL;
    char *realised = NULL;
    if (nq > 2 && cmd(rq, &realised, 0) != 0) {
        free(realised);
        return apierr_set(err, RW_EUSAGE, "nix-store --realise of the inputs of %s failed", drv);
    }
    nq = 0;
    rq[nq++] = "nix-store";
    rq[nq++] = "-qR";
    for (char *save = NULL, *sp = realised ? strtok_r(realised, "\n", &save) : NULL;
         sp && nq < CLOSURE_MAX; sp = strtok_r(NULL, "\n", &save))
        if (store_path_ok(sp))
            rq[nq++] = sp;
    size_t i;
    json_array_foreach(json_object_get(d, "inputSrcs"), i, v)
    {
        if (!store_path_ok(json_string_value(v)) || nq >= CLOSURE_MAX) {
            free(realised);
            return apierr_set(err, RW_EUSAGE, "%s names a bad input source", drv);
        }
        rq[nq++] = (char *)json_string_value(v);
    }
    rq[nq] = NULL;
    int qs = nq > 2 ? cmd(rq, closure, 0) : 0;
    free(realised);
    if (qs != 0)
        return apierr_set(err, RW_EUSAGE, "nix-store -qR of the inputs of %s failed", drv);
    return 0;
}

/* Realise the inputs of derivation d on the host; the closure of them and
 * of its input sources, one store path a line, into *closure. */
static int input_closure(json_t *d, const char *drv, char **closure, struct rw_error *err)
{
    char **rq = malloc((CLOSURE_MAX + 8) * sizeof(*rq)); /* not static: reentrant */
    if (!rq)
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    int rc = input_closure_in(d, drv, closure, err, rq);
    free(rq);
    return rc;
}

/* The builder's command line and environment, as Nix gives them. */
static int builder_args(json_t *d, const char *builder, const char *opath, struct rw_nix_job *j,
                        struct rw_error *err)
{
    json_t *args = json_object_get(d, "args"), *env = json_object_get(d, "env"), *v;
    size_t na = json_array_size(args), ne = json_object_size(env), i, e = 0;
    const char *k;
    j->argv = calloc(na + 2, sizeof(char *));
    j->env = calloc(ne + 16, sizeof(char *));
    if (!j->argv || !j->env)
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    j->argv[0] = strdup(builder);
    json_array_foreach(args, i, v) j->argv[i + 1] =
        strdup(json_string_value(v) ? json_string_value(v) : "");
    static const char *fixed[] = {"PATH=/path-not-set",   "HOME=/homeless-shelter",
                                  "NIX_BUILD_TOP=/build", "TMPDIR=/build",
                                  "TEMPDIR=/build",       "TMP=/build",
                                  "TEMP=/build",          "NIX_BUILD_CORES=1",
                                  "NIX_LOG_FD=2",         "TERM=xterm-256color"};
    json_object_foreach(env, k, v)
    {
        if (asprintf(&j->env[e], "%s=%s", k, json_string_value(v) ? json_string_value(v) : "") <
            0) {
            j->env[e] = NULL;
            return apierr_set(err, RW_EINTERNAL, "out of memory");
        }
        e++;
    }
    for (size_t f = 0; f < sizeof(fixed) / sizeof(fixed[0]); f++) {
        size_t kl = (size_t)(strchr(fixed[f], '=') - fixed[f]) + 1, x;
        for (x = 0; x < e && strncmp(j->env[x], fixed[f], kl); x++)
            ;
        if (x == e) /* the derivation's own value wins (PATH, ...) */
            j->env[e++] = strdup(fixed[f]);
    }
    char nixstore[PATH_MAX];
    if (snprintf(nixstore, sizeof(nixstore), "NIX_STORE=%s", opath) >= (int)sizeof(nixstore))
        return apierr_set(err, RW_EUSAGE, "the output path is too long");
    *strrchr(nixstore, '/') = 0;
    j->env[e++] = strdup(nixstore);
    for (size_t x = 0; x < e; x++)
        if (!j->env[x])
            return apierr_set(err, RW_EINTERNAL, "out of memory");
    return 0;
}

int rw_nix_prepare(rw_home *h, const struct rw_nix_config *c, struct rw_nix_job *j,
                   struct rw_error *err)
{
    RW_ASSERT(h && c && j);
    memset(j, 0, sizeof(*j));
    if (find_drv(c, j->drv, sizeof(j->drv), err) < 0)
        return -1;
    char *js = NULL;
    char *sd[] = {"nix", "--extra-experimental-features", "nix-command", "show-derivation", j->drv,
                  NULL};
    if (cmd(sd, &js, 0) != 0 || !js) {
        free(js);
        return apierr_set(err, RW_EUSAGE, "nix show-derivation %s failed", j->drv);
    }
    json_error_t je;
    json_t *all = json_loads(js, 0, &je);
    free(js);
    json_t *d = json_object_get(all, j->drv);
    json_t *outs = json_object_get(d, "outputs"), *env = json_object_get(d, "env");
    const char *builder = json_string_value(json_object_get(d, "builder"));
    char *closure = NULL;
    int rc = -1;
    if (!json_is_object(outs) || !json_is_object(env) || !store_path_ok(builder) ||
        !json_is_array(json_object_get(d, "args"))) {
        apierr_set(err, RW_EUSAGE, "nix show-derivation gave an unexpected answer for %s", j->drv);
        goto out;
    }
    const char *system = json_string_value(json_object_get(d, "system"));
    if (!system || strcmp(system, "x86_64-linux")) {
        apierr_set(err, RW_EUSAGE, "%s is for %s; rewind builds x86_64-linux", j->drv,
                   system ? system : "no system");
        goto out;
    }
    json_t *o1 = json_object_get(outs, "out");
    const char *oname = "out";
    if (!o1 && json_object_size(outs) == 1) {
        void *it = json_object_iter(outs);
        oname = json_object_iter_key(it);
        o1 = json_object_iter_value(it);
    }
    const char *opath = json_string_value(json_object_get(o1, "path"));
    if (!store_path_ok(opath) || json_object_size(outs) != 1) {
        apierr_set(err, RW_EUSAGE, "%s has %zu outputs; rewind builds derivations with one output",
                   j->drv, json_object_size(outs));
        goto out;
    }
    snprintf(j->out_name, sizeof(j->out_name), "%s", oname);
    snprintf(j->out_path, sizeof(j->out_path), "%s", opath);
    j->network =
        json_object_get(env, "outputHash") != NULL || json_object_get(env, "__impure") != NULL;
    if (input_closure(d, j->drv, &closure, err) < 0)
        goto out;
    /* Invariant 1: the root. */
    if (snprintf(j->root, sizeof(j->root), "%s/tmp.nix.%ld", rw_home_path(h), (long)getpid()) >=
        (int)sizeof(j->root)) {
        j->root[0] = 0;
        apierr_set(err, RW_EUSAGE, "the home's path is too long");
        goto out;
    }
    remove_tree(j->root);
    if (io_mkdir_p(j->root) < 0) {
        apierr_set(err, RW_EINTERNAL, "cannot make %s: %s", j->root, strerror(errno));
        goto out;
    }
    if (make_root(j->root, closure ? closure : (char *)"", err) < 0 ||
        builder_args(d, builder, opath, j, err) < 0)
        goto out;
    j->run = c->run;
    j->run.root = j->root;
    j->run.argv = j->argv;
    j->run.env = j->env;
    j->run.cwd = "/build";
    j->run.collect = j->out_path;
    j->run.nix_drv = j->drv; /* invariant 2 */
    rc = 0;
out:
    free(closure);
    json_decref(all);
    if (rc < 0)
        rw_nix_job_free(j);
    return rc;
}

int rw_nix_output_hash(rw_home *h, const char *run, char out[80], struct rw_error *err)
{
    return nar_of_run(h, run, out, err);
}

int rw_nix_store_hash(const char *path, char out[80])
{
    out[0] = 0;
    if (!store_path_ok(path))
        return 0;
    char *chk[] = {"nix-store", "--check-validity", (char *)path, NULL};
    if (run_tool(chk, 1) != 0)
        return 0;
    char *hq = NULL;
    char *qh[] = {"nix-store", "-q", "--hash", (char *)path, NULL};
    int in = cmd(qh, &hq, 0) == 0 && last_line(hq) && strlen(last_line(hq)) < 80;
    if (in)
        snprintf(out, 80, "%s", last_line(hq));
    free(hq);
    return in;
}

int rw_nix_build(rw_home *h, const struct rw_nix_config *c, struct rw_nix_report *r,
                 struct rw_error *err)
{
    RW_ASSERT(h && c && r);
    memset(r, 0, sizeof(*r));
    struct rw_nix_job j; /* ~6 KiB on the stack, not static: the engine is reentrant */
    if (rw_nix_prepare(h, c, &j, err) < 0)
        return -1;
    snprintf(r->drv, sizeof(r->drv), "%s", j.drv);
    snprintf(r->out_name, sizeof(r->out_name), "%s", j.out_name);
    snprintf(r->out_path, sizeof(r->out_path), "%s", j.out_path);
    r->network = j.network;
    int rc = rw_record(h, &j.run, &r->run, err);
    rw_nix_job_free(&j);
    if (rc < 0)
        return -1;
    if (r->run.outcome != RW_EXITED || r->run.exit_code != 0) {
        snprintf(r->message, sizeof(r->message), "the builder failed (%s %d)%s",
                 rw_outcome_word(r->run.outcome), r->run.exit_code,
                 r->network ? ": this derivation fetches from the network (it is fixed-output), "
                              "and the VM has no network"
                            : "");
        return 0;
    }
    if (nar_of_run(h, r->run.id, r->nar_hash, err) < 0)
        return -1;
    r->in_store = rw_nix_store_hash(r->out_path, r->store_hash);
    r->matches = r->in_store && !strcmp(r->store_hash, r->nar_hash);
    return 0;
}
