/*
 * warm: many forks of one stored run in one process (docs/architecture.md,
 * "check workers"). Every fork is a run begun on a machine (lock, image,
 * KVM, page store, keyframe pages) opened in this process, restored from the
 * parent's keyframe (pages copied from a materialized keyframe where their
 * names match, the rest read from the store), run, kept and ended. The
 * machine is opened anew for each fork (invariant 3; the image, hashes and
 * store cost little the second time in a process), or kept and restored in
 * place with REWIND_CHECK_INPLACE=1.
 *
 * Invariants:
 *  1. A fork made here is the fork run_fork makes with the same arguments:
 *     the same options (run_fork_opts), the same restore (run_restore) and
 *     the same tail (run_body); only the machine is reused (ctx.h
 *     invariant 6), so its id, trace, keyframes and manifest are the same.
 *  2. After a failed fork the machine is closed, never reused: a machine
 *     whose run failed half-way is in no state anyone checked.
 *  3. By default every fork gets a fresh VM (KVM, RAM, keyframe state), as a
 *     fresh process would, and copies the keyframe's pages from the shared
 *     materialized keyframe: what is kept across forks is the process, the
 *     image, the hashes and the page store. Keeping the VM too and restoring
 *     in place (only the pages dirtied since, REWIND_CHECK_INPLACE=1) gave
 *     the same traces, but with -j 2 a narrowing probe once ended with a
 *     final RAM hash that its replay from boot did not reproduce
 *     (t_schedules, 2026-12-01): some state of a used VM outlives the
 *     restore, unexplained yet, so it is off by default.
 *  4. In place, every fork after the first starts with KVM's memory map made
 *     new (warm_reset_mmu): the RAM slots deleted and added back, so no
 *     shadow or nested page-table entry, and no write protection left by
 *     the dirty log, outlives the fork that built it; a restore writes RAM
 *     from user space, which KVM's shadow MMU (write-protecting the guest's
 *     page tables) never sees. The dirty log is kept in vm->dirty first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/modes.h"
#include "store/store.h"
#include "util/check.h"
#include "util/hash.h"
#include "vmm/snapshot.h"

struct run_warm {
    struct run_ctx c;
    struct run_opts o; /* the current fork's options (c.o points here) */
    const struct run_opts *base;
    const struct kfmat *src;
    char parent[RW_ID_MAX];
    struct rw_result res0;
    struct rw_error err0;
    int open;
    int in_place; /* REWIND_CHECK_INPLACE=1: keep the VM, restore in place */
    int used;     /* the VM ran a fork since it was opened */
    int keep_mmu; /* test hole REWIND_TEST_INPLACE_KEEP_MMU=1: invariant 4 off */
};

/* REWIND_TEST_STATE_DUMP=DIR (diagnosis, bench/RESULTS.md "Speed (issue 17)"): the whole
 * machine after a fork's restore and at its end, one file per fork and
 * mode, to diff an in-place restore against a fresh one. Every RAM page
 * ever written is hashed from its bytes, and a page whose bytes are not its name in
 * kf.cur while the dirty log says it is unchanged is named "stale". */
static void warm_dump(struct run_warm *w, const char *when, const struct sched_segment *g)
{
    const char *dir = getenv("REWIND_TEST_STATE_DUMP");
    if (!dir || !w->c.p)
        return;
    char kerr[512]; /* cur[] is the worker's until joined (kfcap.h invariant 6) */
    if (w->c.kf_ready && w->c.kf.writing && kfcap_sync(&w->c.kf, kerr, sizeof(kerr)) < 0)
        fprintf(stderr, "rewind: state dump: %s\n", kerr);
    char path[4096];
    snprintf(path, sizeof(path), "%s/s%llu-f%llu-u%llu-o%llu-h%llu-b%llu.%s", dir,
             (unsigned long long)g->schedule, (unsigned long long)g->from,
             (unsigned long long)g->until, (unsigned long long)g->origin,
             (unsigned long long)g->horizon, (unsigned long long)g->span_from,
             w->in_place ? "inplace" : "fresh");
    FILE *f = fopen(path, "ae");
    if (!f)
        return;
    fprintf(f, "when %s\n", when);
    char e[256];
    if (snap_dump(w->c.p, f, e, sizeof(e)) < 0)
        fprintf(f, "error %s\n", e);
    struct kvm_vm *vm = &w->c.vm;
    hash256 zero, h;
    store_zero_hash(&zero);
    static const hash256 none;
    int dirty_ok = kvm_collect_dirty(vm) == 0;
    uint64_t npfn = vm->ram_size / 4096, nonzero = 0, stale = 0;
    for (uint64_t pfn = 0; pfn < npfn; pfn++) {
        int written = vm->written[pfn / 64] >> (pfn % 64) & 1; /* else zero (kvm.h 1, 2) */
        if (written)
            hash_buf(vm->ram + pfn * 4096, 4096, &h);
        int zero_page = !written || !memcmp(&h, &zero, sizeof(h));
        char hex[65];
        hash_hex(&h, hex);
        if (!zero_page) {
            nonzero++;
            fprintf(f, "page %llx %s\n", (unsigned long long)pfn, hex);
        }
        if (!w->c.kf.cur || !dirty_ok || (vm->dirty[pfn / 64] >> (pfn % 64) & 1))
            continue;
        const hash256 *c = &w->c.kf.cur[pfn];
        if (zero_page ? memcmp(c, &none, sizeof(*c)) != 0 : memcmp(c, &h, sizeof(h)) != 0) {
            stale++;
            fprintf(f, "stale %llx\n", (unsigned long long)pfn);
        }
    }
    fprintf(f, "pages nonzero %llu stale %llu dirty_log %d\n", (unsigned long long)nonzero,
            (unsigned long long)stale, dirty_ok);
    fclose(f);
}

/* Invariant 4: KVM's memory map of a used VM made new, as a fresh VM's is.
 * The dirty log is folded into vm->dirty first (the restore reads it from
 * there), then each RAM slot is deleted, which drops every shadow and
 * nested page-table entry KVM built for it, and added back, with a fresh
 * dirty log. */
static int warm_reset_mmu(struct kvm_vm *vm)
{
    if (kvm_collect_dirty(vm) < 0)
        return -1;
    uint64_t low = kvm_ram_low(vm);
    RW_ASSERT(low > 0 && low <= vm->ram_size);
    if (kvm_set_region(vm, 0, KVM_MEM_LOG_DIRTY_PAGES, 0, 0, vm->ram) < 0 ||
        kvm_set_region(vm, 0, KVM_MEM_LOG_DIRTY_PAGES, 0, low, vm->ram) < 0)
        return -1;
    if (vm->ram_size > low && (kvm_set_region(vm, KVM_HIGH_SLOT, KVM_MEM_LOG_DIRTY_PAGES,
                                              KVM_HIGH_GPA, 0, vm->ram + low) < 0 ||
                               kvm_set_region(vm, KVM_HIGH_SLOT, KVM_MEM_LOG_DIRTY_PAGES,
                                              KVM_HIGH_GPA, vm->ram_size - low, vm->ram + low) < 0))
        return -1;
    return 0;
}

static int warm_machine(struct run_warm *w, struct rw_error *err)
{
    w->o = *w->base;
    if (run_machine_open(&w->c, &w->o, 1, &w->res0, err) < 0) {
        run_close(&w->c, -1);
        return -1;
    }
    w->c.kf.src = w->src;
    w->open = 1;
    w->used = 0;
    return 0;
}

int run_warm_open(struct run_warm **out, const struct run_opts *base, const char *parent,
                  const struct kfmat *src, struct rw_error *err)
{
    *out = NULL;
    struct run_warm *w = calloc(1, sizeof(*w));
    if (!w)
        return run_usage(err, "out of memory");
    w->base = base;
    w->src = src;
    const char *ip = getenv("REWIND_CHECK_INPLACE");
    w->in_place = ip && !strcmp(ip, "1");
    const char *km = getenv("REWIND_TEST_INPLACE_KEEP_MMU"), *holes = getenv("REWIND_TEST_HOLES");
    w->keep_mmu = km && !strcmp(km, "1") && holes && !strcmp(holes, "1");
    snprintf(w->parent, sizeof(w->parent), "%s", parent);
    if (warm_machine(w, err) < 0) {
        free(w);
        return -1;
    }
    *out = w;
    return 0;
}

int run_warm_fork(struct run_warm *w, const struct sched_segment *g, struct rw_result *res,
                  struct rw_error *err)
{
    memset(res, 0, sizeof(*res));
    if (w->open && !w->in_place) { /* invariant 3: a fresh VM for every fork */
        run_close(&w->c, 0);
        w->open = 0;
    }
    if (!w->open && warm_machine(w, err) < 0) /* invariant 2 */
        return -1;
    w->o = *w->base;
    if (run_fork_opts(&w->o, g, err) < 0)
        return -1;
    /* invariant 1: run_fork's phases, on the machine kept open */
    int rc = run_begin(&w->c, &w->o, NULL, RUN_KEEP, res, err);
    if (rc == 0 && w->in_place && w->used && !w->keep_mmu && warm_reset_mmu(&w->c.vm) < 0) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "cannot reset the VM's memory map: %s",
                 strerror(errno));
        rc = -1;
    }
    w->used = 1;
    if (rc == 0)
        rc = run_restore(&w->c, w->parent, g->span_from - 1, g->span_from);
    if (rc == 0)
        warm_dump(w, "restored", g);
    rc = run_body(&w->c, rc);
    warm_dump(w, "end", g);
    rc = run_end(&w->c, rc);
    if (rc < 0) { /* invariant 2 (the run is ended already: 0 keeps err) */
        run_close(&w->c, 0);
        w->open = 0;
    }
    return rc;
}

void run_warm_close(struct run_warm *w)
{
    if (!w)
        return;
    if (w->open) {
        struct rw_error scratch;
        w->c.err = &scratch;
        run_close(&w->c, 0);
    }
    free(w);
}
