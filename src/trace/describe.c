/*
 * describe: see describe.h. Payload bytes are shown escaped, truncated.
 *
 * Invariants:
 *  1. Every text is a pure function of its inputs: no host locale, no
 *     strsignal; signal names are a fixed table (Linux x86_64 numbering),
 *     so a trace reads the same on every host.
 *  2. describe_wait_status writes exactly one of "exited N", "killed by
 *     SIGNAME", "killed by SIGNAME (core)", "killed by signal N",
 *     "stopped by SIGNAME" or "wait status N" (a value no wait status holds).
 */
#include "trace/describe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "input/faults.h"
#include "rewind.h"
#include "trace/schedrec.h"
#include "trace/sdk.h"
#include "util/bytes.h"

static const char *const names[] = {
    [REWIND_REC_CONSOLE] = "console", [REWIND_REC_OUTPUT] = "output",
    [REWIND_REC_EXEC] = "exec",       [REWIND_REC_FORK] = "fork",
    [REWIND_REC_EXIT] = "exit",       [REWIND_REC_SIGNAL] = "signal",
    [REWIND_REC_OPEN] = "open",       [REWIND_REC_UNLINK] = "unlink",
    [REWIND_REC_RENAME] = "rename",   [REWIND_REC_MARK] = "mark",
    [REWIND_REC_ASSERT] = "assert",   [REWIND_REC_INIT] = "init",
    [REWIND_REC_SCHED] = "sched",     [REWIND_REC_WRITE] = "write",
    [REWIND_REC_ACCESS] = "access",   [REWIND_REC_FAULT] = "fault",
};

/* Whether a split record's side (its payload's u32 at 12) is one a split
 * can have, named by node: a non-empty set of nodes, not every node
 * (faults_split_words), whose lowest is the record's node (rewind_abi.h,
 * REWIND_FAULT_SPLIT). */
static int split_side_ok(uint32_t side, unsigned node)
{
    char words[96];
    return faults_split_words(side, words, sizeof(words)) == 0 &&
           node == 1 + (unsigned)__builtin_ctz(side);
}

/* A fault record's parts (docs/faults.md; rewind_abi.h, REWIND_REC_FAULT):
 * aux = kind | node << 8; payload u64 ns, u32 processes (a split's: of
 * every node), and for net, disk, split and restart a u32 more (net's arg,
 * disk's mode, split's first side, the restart's new leader). A power
 * cut's is a kill's (ns: its restart delay); a lost record's (the writes a
 * power cut undid) is u64 bytes undone, u32 files changed, u32 bytes not
 * undone, into f's lost_* (its ns and procs 0). 0, or -1 (f zeroed) when
 * it is malformed: an unknown kind, a node out of range, stray aux bits, a
 * payload too short for its kind, a net arg or disk mode rewind_abi.h does
 * not allow, or a split side split_side_ok refuses (the trace is
 * untrusted: nothing is read past the payload's end). */
static int fault_parse(uint64_t aux, const uint8_t *pay, size_t len, struct rw_fault_event *f)
{
    uint32_t kind = (uint32_t)(aux & 0xff);
    unsigned node = (unsigned)((aux >> 8) & 0xff);
    int extra = kind == REWIND_FAULT_NET || kind == REWIND_FAULT_RESTART ||
                kind == REWIND_FAULT_DISK || kind == REWIND_FAULT_SPLIT ||
                kind == REWIND_FAULT_LOST;
    char words[96];
    memset(f, 0, sizeof(*f));
    if (len < (extra ? 16u : 12u) || !faults_kind_name(kind) || kind == 0 || node == 0 ||
        node > REWIND_NODES_MAX || (aux >> 16) != 0 ||
        (kind == REWIND_FAULT_NET &&
         faults_net_words(bytes_get_u32(pay + 12), words, sizeof(words)) < 0) ||
        (kind == REWIND_FAULT_DISK &&
         faults_disk_words(bytes_get_u32(pay + 12), words, sizeof(words)) < 0) ||
        (kind == REWIND_FAULT_SPLIT && !split_side_ok(bytes_get_u32(pay + 12), node)))
        return -1;
    f->kind = faults_kind_name(kind);
    f->node = node;
    if (kind == REWIND_FAULT_LOST) { /* no length, no processes: what was undone */
        f->lost_bytes = bytes_get_u64(pay);
        f->lost_files = bytes_get_u32(pay + 8);
        f->lost_kept = bytes_get_u32(pay + 12);
        return 0;
    }
    f->ns = bytes_get_u64(pay);
    f->procs = bytes_get_u32(pay + 8);
    if (kind == REWIND_FAULT_NET) {
        uint32_t arg = bytes_get_u32(pay + 12);
        f->net_mode = faults_net_mode_name(REWIND_NET_MODE(arg));
        f->net_percent = REWIND_NET_PERCENT(arg);
        f->net_delay_ms = REWIND_NET_DELAY_MS(arg);
    }
    if (kind == REWIND_FAULT_RESTART)
        f->leader_pid = bytes_get_u32(pay + 12);
    if (kind == REWIND_FAULT_DISK)
        f->disk_mode = faults_disk_mode_name(bytes_get_u32(pay + 12));
    if (kind == REWIND_FAULT_SPLIT)
        f->split_side = bytes_get_u32(pay + 12);
    return 0;
}

int rw_event_fault(const struct rw_event *ev, struct rw_fault_event *f)
{
    if (ev->kind != REWIND_REC_FAULT) {
        memset(f, 0, sizeof(*f));
        return -1;
    }
    return fault_parse(ev->aux, ev->payload, ev->payload_len, f);
}

/* A lost record's words: "fault lost node 1: 3 files back to their last
 * sync, 8192 bytes of writes undone" ("1 file back to its last sync"), and
 * ", 512 bytes not undone (over the limit)" when the kernel could not undo
 * some. */
static void lost_words(const struct rw_fault_event *f, char *out, size_t n)
{
    int one = f->lost_files == 1;
    int w = snprintf(out, n,
                     "fault lost node %u: %u file%s back to %s last sync, %llu byte%s of "
                     "writes undone",
                     f->node, f->lost_files, one ? "" : "s", one ? "its" : "their",
                     (unsigned long long)f->lost_bytes, f->lost_bytes == 1 ? "" : "s");
    if (f->lost_kept && w >= 0 && (size_t)w < n)
        snprintf(out + w, n - (size_t)w, ", %u byte%s not undone (over the limit)", f->lost_kept,
                 f->lost_kept == 1 ? "" : "s");
}

/* A fault record's words; -1 when it is malformed (fault_parse). */
static int describe_fault(const struct trace_entry *e, char *out, size_t n)
{
    const struct rewind_record *r = &e->rec;
    struct rw_fault_event f;
    if (fault_parse(r->aux, e->payload, e->payload_len, &f) < 0)
        return -1;
    uint32_t kind = (uint32_t)(r->aux & 0xff);
    unsigned node = f.node, procs = f.procs;
    double ms = (double)f.ns / 1e6;
    const char *pl = procs == 1 ? "" : "es";
    char words[96];
    switch (kind) {
    case REWIND_FAULT_KILL:
        if (f.ns) /* a restart after a delay */
            snprintf(out, n, "fault kill node %u: SIGKILL to %u process%s; restart in %.3f ms",
                     node, procs, pl, ms);
        else
            snprintf(out, n, "fault kill node %u: SIGKILL to %u process%s", node, procs, pl);
        break;
    case REWIND_FAULT_POWER: /* a kill's words, and the undo to come (a lost record) */
        if (f.ns)
            snprintf(out, n,
                     "fault power node %u: SIGKILL to %u process%s, its unsynced writes to be "
                     "undone; restart in %.3f ms",
                     node, procs, pl, ms);
        else
            snprintf(out, n,
                     "fault power node %u: SIGKILL to %u process%s, its unsynced writes to be "
                     "undone",
                     node, procs, pl);
        break;
    case REWIND_FAULT_LOST:
        lost_words(&f, out, n);
        break;
    case REWIND_FAULT_PAUSE:
        snprintf(out, n, "fault pause node %u for %.3f ms: SIGSTOP to %u process%s", node, ms,
                 procs, pl);
        break;
    case REWIND_FAULT_PARTITION:
        snprintf(out, n, "fault partition node %u for %.3f ms: its link carries nothing", node, ms);
        break;
    case REWIND_FAULT_HEAL:
        snprintf(out, n, "fault heal node %u: its link carries packets again", node);
        break;
    case REWIND_FAULT_CLOCK: {
        int64_t d = (int64_t)f.ns;
        snprintf(out, n, "fault clock node %u: its wall clock %s by %.3f s", node,
                 d < 0 ? "back" : "forward", fabs((double)d) / 1e9);
        break;
    }
    case REWIND_FAULT_NET:
        faults_net_words(bytes_get_u32(e->payload + 12), words, sizeof(words)); /* checked */
        snprintf(out, n, "fault net node %u for %.3f ms: %s", node, ms, words);
        break;
    case REWIND_FAULT_CLEAR:
        snprintf(out, n, "fault clear node %u: its link is clean again", node);
        break;
    case REWIND_FAULT_RESTART:
        snprintf(out, n, "fault restart node %u: its restart command runs as pid %u", node,
                 f.leader_pid);
        break;
    case REWIND_FAULT_DISK: /* faults_describe's words for the mode */
        faults_disk_words(bytes_get_u32(e->payload + 12), words, sizeof(words)); /* checked */
        snprintf(out, n, "fault disk node %u for %.3f ms: %s", node, ms, words);
        break;
    case REWIND_FAULT_MEND:
        snprintf(out, n, "fault mend node %u: its disk works again", node);
        break;
    case REWIND_FAULT_SPLIT: /* faults_describe's side in words */
        faults_split_words(f.split_side, words, sizeof(words)); /* checked */
        snprintf(out, n,
                 "fault split node %u for %.3f ms: %s apart from the other nodes (the job "
                 "reaches every node)",
                 node, ms, words);
        break;
    case REWIND_FAULT_JOIN:
        snprintf(out, n, "fault join node %u: the network is whole again", node);
        break;
    default: /* continue */
        snprintf(out, n, "fault %s node %u: SIGCONT to %u process%s", f.kind, node, procs, pl);
        break;
    }
    return 0;
}

const char *describe_kind(unsigned kind, char *buf)
{
    if (kind < sizeof(names) / sizeof(names[0]) && names[kind])
        return names[kind];
    snprintf(buf, RW_KIND_NAME_MAX, "kind-%u", kind);
    return buf;
}

unsigned describe_kind_number(const char *name)
{
    for (unsigned k = 1; k < sizeof(names) / sizeof(names[0]); k++)
        if (names[k] && !strcmp(names[k], name))
            return k;
    return 0;
}

/* Linux x86_64 signal numbers (asm/signal.h); 0 and >31 have no name here. */
static const char *const signames[] = {
    [1] = "SIGHUP",     [2] = "SIGINT",   [3] = "SIGQUIT",   [4] = "SIGILL",   [5] = "SIGTRAP",
    [6] = "SIGABRT",    [7] = "SIGBUS",   [8] = "SIGFPE",    [9] = "SIGKILL",  [10] = "SIGUSR1",
    [11] = "SIGSEGV",   [12] = "SIGUSR2", [13] = "SIGPIPE",  [14] = "SIGALRM", [15] = "SIGTERM",
    [16] = "SIGSTKFLT", [17] = "SIGCHLD", [18] = "SIGCONT",  [19] = "SIGSTOP", [20] = "SIGTSTP",
    [21] = "SIGTTIN",   [22] = "SIGTTOU", [23] = "SIGURG",   [24] = "SIGXCPU", [25] = "SIGXFSZ",
    [26] = "SIGVTALRM", [27] = "SIGPROF", [28] = "SIGWINCH", [29] = "SIGIO",   [30] = "SIGPWR",
    [31] = "SIGSYS",
};

const char *describe_signal_name(unsigned sig)
{
    return sig < sizeof(signames) / sizeof(signames[0]) ? signames[sig] : NULL;
}

static void signal_words(unsigned sig, char *out, size_t n)
{
    const char *name = describe_signal_name(sig);
    if (name)
        snprintf(out, n, "%s", name);
    else
        snprintf(out, n, "signal %u", sig);
}

void describe_wait_status(uint64_t status, char *out, size_t n)
{
    char sig[32];
    unsigned low = (unsigned)(status & 0x7f);
    if (status > 0xffff) {
        snprintf(out, n, "wait status %llu", (unsigned long long)status);
    } else if (low == 0) {
        snprintf(out, n, "exited %u", (unsigned)(status >> 8) & 0xff);
    } else if (low == 0x7f) {
        signal_words((unsigned)(status >> 8) & 0xff, sig, sizeof(sig));
        snprintf(out, n, "stopped by %s", sig);
    } else {
        signal_words(low, sig, sizeof(sig));
        snprintf(out, n, "killed by %s%s", sig, status & 0x80 ? " (core)" : "");
    }
}

/* Escape up to max payload bytes; NULs become spaces (argv separators). */
static void escape(const unsigned char *p, size_t len, char *out, size_t n, size_t max)
{
    size_t o = 0;
    for (size_t i = 0; i < len && i < max && o + 5 < n; i++) {
        unsigned char c = p[i];
        if (c == '\n')
            o += (size_t)snprintf(out + o, n - o, "\\n");
        else if (c == 0)
            out[o++] = ' ';
        else if (c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, n - o, "\\%c", c);
        else if (c < 32 || c > 126)
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    if (len > max && o + 4 < n)
        o += (size_t)snprintf(out + o, n - o, "...");
    out[o < n ? o : n - 1] = 0;
}

/* "sched 21->22 22->21" (+ " (lost 3)"); the raw form if malformed. */
static void describe_sched(const struct trace_entry *e, char *out, size_t n)
{
    struct rewind_switch sw[REWIND_SW_MAX];
    uint32_t k;
    uint64_t lost;
    char why[200];
    if (schedrec_parse(&e->rec, e->payload, e->payload_len, sw, &k, &lost, why, sizeof(why)) < 0) {
        snprintf(out, n, "sched (malformed: %s)", why);
        return;
    }
    size_t o = (size_t)snprintf(out, n, "sched");
    for (uint32_t i = 0; i < k && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, " %u->%u", sw[i].prev, sw[i].next);
    if (lost && o < n)
        snprintf(out + o, n - o, " (lost %llu)", (unsigned long long)lost);
}

void describe_entry(const struct trace_entry *e, char *out, size_t n)
{
    char text[512], kind[RW_KIND_NAME_MAX];
    size_t len = e->payload_len;
    while (len && e->payload[len - 1] == 0) /* argv lists end in NUL: no trailing space */
        len--;
    escape(e->payload, len, text, sizeof(text), 160);
    const struct rewind_record *r = &e->rec;
    struct sdk_line sdk;
    if ((r->kind == REWIND_REC_MARK || r->kind == REWIND_REC_ASSERT) &&
        sdk_parse(e->payload, e->payload_len, &sdk) == 0) {
        sdk_describe(&sdk, r->pid, r->tid, out, n); /* docs/sdk.md */
        return;
    }
    switch (r->kind) {
    case REWIND_REC_OUTPUT:
        snprintf(out, n, "output fd %llu pid %u/%u: \"%s\"", (unsigned long long)r->aux, r->pid,
                 r->tid, text);
        break;
    case REWIND_REC_FORK:
        snprintf(out, n, "%s pid %u/%u -> %llu", r->flags & 1 ? "thread" : "fork", r->pid, r->tid,
                 (unsigned long long)r->aux);
        break;
    case REWIND_REC_EXIT: {
        char how[64];
        describe_wait_status(r->aux, how, sizeof(how));
        snprintf(out, n, "exit pid %u/%u \"%s\": %s", r->pid, r->tid, text, how);
        break;
    }
    case REWIND_REC_SIGNAL: {
        unsigned long long addr = e->payload_len >= 8 ? bytes_get_u64(e->payload) : 0;
        snprintf(out, n, "signal %llu (code %lld) pid %u/%u addr 0x%llx",
                 (unsigned long long)(r->aux & 0xff), (long long)(int)(r->aux >> 8), r->pid, r->tid,
                 addr);
        break;
    }
    case REWIND_REC_SCHED:
        describe_sched(e, out, n);
        break;
    case REWIND_REC_FAULT: /* docs/faults.md: aux = kind | node << 8; u64 ns, u32 processes */
        if (describe_fault(e, out, n) == 0)
            break;
        snprintf(out, n, "fault (malformed) aux %llu", (unsigned long long)r->aux);
        break;
    case REWIND_REC_WRITE: /* docs/nix.md: u64 length, u64 FNV-1a-64, path */
        if (e->payload_len >= 16) {
            escape(e->payload + 16, e->payload_len - 16, text, sizeof(text), 160);
            snprintf(out, n, "write pid %u/%u %s: %llu bytes at %llu (fnv %016llx)", r->pid, r->tid,
                     text, (unsigned long long)bytes_get_u64(e->payload),
                     (unsigned long long)r->aux, (unsigned long long)bytes_get_u64(e->payload + 8));
            break;
        }
        /* fall through */
    case REWIND_REC_ACCESS: /* docs/determinism.md: aux = address, payload u64 ip */
        if (r->kind == REWIND_REC_ACCESS && e->payload_len >= 8) {
            snprintf(out, n, "access pid %u/%u %s 0x%llx at ip 0x%llx", r->pid, r->tid,
                     r->flags & REWIND_ACCESS_WRITE ? "write" : "read", (unsigned long long)r->aux,
                     (unsigned long long)bytes_get_u64(e->payload));
            break;
        }
        /* fall through */
    default:
        snprintf(out, n, "%s pid %u/%u aux %llu: \"%s\"", describe_kind(r->kind, kind), r->pid,
                 r->tid, (unsigned long long)r->aux, text);
    }
}

void rw_wait_status_text(uint64_t status, char *out, size_t n)
{
    describe_wait_status(status, out, n);
}
