/* compare: see compare.h. */
#include "trace/compare.h"

#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

static int same(const struct trace_entry *x, const struct trace_entry *y)
{
    return x->step == y->step && x->rec.kind == y->rec.kind && x->rec.pid == y->rec.pid &&
           x->rec.tid == y->rec.tid && x->rec.aux == y->rec.aux &&
           x->rec.flags == y->rec.flags && x->payload_len == y->payload_len &&
           !memcmp(x->payload, y->payload, x->payload_len);
}

int compare_traces(const char *a, const char *b, struct trace_difference *d)
{
    memset(d, 0, sizeof(*d));
    struct trace_reader *ra = malloc(sizeof(*ra)), *rb = malloc(sizeof(*rb));
    int rc = -1;
    if (!ra || !rb)
        goto out;
    int oa = trace_open_read(ra, a);
    if (oa < 0) {
        rc = oa;
        goto out;
    }
    int ob = trace_open_read(rb, b);
    if (ob < 0) {
        trace_close_read(ra);
        rc = ob;
        goto out;
    }
    struct trace_entry ea, eb;
    for (;;) {
        int ha = trace_next(ra, &ea), hb = trace_next(rb, &eb);
        if (!ha && !hb)
            break;
        if (ha != hb || !same(&ea, &eb)) {
            d->differ = 1;
            d->step_a = ha ? ea.step : 0;
            d->step_b = hb ? eb.step : 0;
            break;
        }
        d->index++;
        d->common++;
    }
    trace_close_read(ra);
    trace_close_read(rb);
    rc = 0;
out:
    free(ra);
    free(rb);
    return rc;
}
