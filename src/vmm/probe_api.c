/*
 * probe_api: rw_kvm_probe (include/rewind.h), the public face of probe.h
 * for `rewind doctor`.
 */
#include <stdio.h>
#include <string.h>

#include "util/apierr.h"
#include "rewind.h"
#include "vmm/probe.h"

int rw_kvm_probe(struct rw_kvm_probe *p, struct rw_error *err)
{
    struct probe_result r;
    char msg[256] = "";
    memset(p, 0, sizeof(*p));
    if (probe_run(&r, msg, sizeof(msg)) < 0)
        return apierr_set(err, RW_ENOKVM, "%s", msg);
    p->cpl0_iters_per_s = r.cpl0_iters_per_s;
    p->exit_us = r.exit_us;
    p->native = r.native;
    snprintf(p->why, sizeof(p->why), "%s", r.why);
    return 0;
}
