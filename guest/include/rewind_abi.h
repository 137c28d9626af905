/* SPDX-License-Identifier: MIT */
/*
 * rewind guest platform ABI: the only interface between the guest kernel (and
 * rewind-init) and the rewind monitor. Included by the monitor, by the kernel
 * patch (copied into the tree as include/uapi/linux/rewind_abi.h) and by
 * rewind-init, so it uses only <linux/types.h> types.
 *
 * Ports: every 32-bit OUT to a port in [REWIND_PORT_BASE, +REWIND_PORT_COUNT*4)
 * is one *step*. The monitor handles it while the vCPU is stopped, advances
 * virtual time by one quantum, and may inject the one interrupt vector
 * (REWIND_VECTOR) before resuming. Nothing else the guest does is a step.
 *
 * Shared page: registered once at boot with REWIND_PORT_SHARED (its guest
 * physical address, page aligned, below 4 GiB). The monitor writes `now_ns`
 * at every step, `epoch_ns` at registration, and ORs reasons into `pending`
 * before it injects REWIND_VECTOR; the guest's handler swaps `pending` to 0.
 * The guest writes `timer_ns` before REWIND_PORT_TIMER and `job_status`
 * before REWIND_PORT_STOP.
 *
 * Records: the guest fills a buffer (header + payload, `len` bytes in all,
 * at most REWIND_RECORD_MAX) in guest RAM and writes its guest-physical
 * address to REWIND_PORT_RECORD. The monitor validates every field; a record
 * it cannot parse ends the run with outcome guest-error.
 */
#ifndef REWIND_ABI_H
#define REWIND_ABI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define REWIND_ABI_VERSION 1

/* CPUID 0x40000000: EAX = max leaf, EBX/ECX/EDX = "RewindRewind". */
#define REWIND_CPUID_BASE 0x40000000u
#define REWIND_CPUID_SIG_EBX 0x69776552u /* "Rewi" */
#define REWIND_CPUID_SIG_ECX 0x6552646eu /* "ndRe" */
#define REWIND_CPUID_SIG_EDX 0x646e6977u /* "wind" */

/* The one interrupt the monitor injects (an MSI into the in-kernel LAPIC). */
#define REWIND_VECTOR 0xf3

/* Ports (32-bit OUT; the value's meaning is per port). */
#define REWIND_PORT_BASE 0x0e00
#define REWIND_PORT_RECORD (REWIND_PORT_BASE + 0x00) /* value: GPA of a record */
#define REWIND_PORT_CLOCK (REWIND_PORT_BASE + 0x04)  /* value: ignored; now_ns updated */
#define REWIND_PORT_TIMER (REWIND_PORT_BASE + 0x08)  /* arm shared->timer_ns from now; 0 disarms */
#define REWIND_PORT_IDLE (REWIND_PORT_BASE + 0x0c)   /* nothing runnable: jump to the deadline */
#define REWIND_PORT_YIELD (REWIND_PORT_BASE + 0x10)  /* sched_yield / schedule point */
#define REWIND_PORT_STOP (REWIND_PORT_BASE + 0x14)   /* value: enum rewind_stop */
#define REWIND_PORT_SHARED (REWIND_PORT_BASE + 0x18) /* value: GPA of the shared page */
#define REWIND_PORT_COUNT 7

/*
 * The debugger's notice (docs/determinism.md, "The debugger on such runs"):
 * a page the monitor maps read-only at REWIND_NOTICE_GPA, outside guest RAM
 * (in no keyframe and no RAM hash). Its first 32-bit word is nonzero only
 * while a debugger resumes the machine. With it nonzero, the guest kernel
 * writes REWIND_PORT_NOTICE when a memory-access burst ends (its trap flag
 * just cleared); that OUT is no step, and the monitor answers it without
 * writing any guest state. Outside the step ports' range on purpose.
 */
#define REWIND_NOTICE_GPA 0xfffa0000u
#define REWIND_PORT_NOTICE 0x0e40

/* A day of virtual time (REWIND_STOP_WAITING). */
#define REWIND_WAIT_LIMIT_NS (86400ull * 1000000000ull)

enum rewind_stop {
    REWIND_STOP_POWEROFF = 0, /* job_status in the shared page is valid */
    REWIND_STOP_REBOOT = 1,
    REWIND_STOP_HALT = 2,
    REWIND_STOP_PANIC = 3,
    /* No user task ran for REWIND_WAIT_LIMIT_NS of virtual time while the
     * guest idled: every one waits on another (a deadlock), and only the
     * kernel's own periodic work would wake it, forever. */
    REWIND_STOP_WAITING = 4,
};

/* Bits of shared->pending. */
#define REWIND_PENDING_TIMER (1ull << 0)
#define REWIND_PENDING_PREEMPT (1ull << 1) /* reschedule the current task */
#define REWIND_PENDING_INSPECT (1ull << 2)
#define REWIND_PENDING_INPUT (1ull << 3)
#define REWIND_PENDING_STALL (1ull << 4)
#define REWIND_PENDING_YIELD (1ull << 5) /* the current user task yields, see Stall */
#define REWIND_PENDING_FAULT (1ull << 6) /* inject the fault in fault_* (see Faults) */

/* Bits of shared->test_holes: each opens one determinism hole on purpose so
 * that a test can see its check fail. The monitor refuses them outside tests. */
#define REWIND_HOLE_HOST_TSC (1ull << 0) /* user RDTSC returns the host TSC */
#define REWIND_HOLE_HOSTILE (1ull << 1)  /* /dev/rewind takes REWIND_IOC_HOSTILE */
#define REWIND_HOLE_MEM_HOST_TIME (1ull << 2) /* memory-access bursts drawn from the host TSC */
#define REWIND_HOLE_WINDOW_HOST_TIME (1ull << 3) /* a window's point bound from the host TSC */
#define REWIND_HOLE_STALL_HOST_TIME (1ull << 4)  /* a stalled sibling counts by the host TSC */
#define REWIND_HOLE_WAIT_HOST_TIME (1ull << 5)   /* the wait limit from the host TSC */

#define REWIND_SHARED_MAGIC 0x31444e4957455200ull /* "\0REWIND1" */
#define REWIND_SHARED_REQ_MAX 1024
#define REWIND_SHARED_INPUT_MAX 1024
#define REWIND_SW_MAX 64       /* context switches the shared page holds between two steps */
#define REWIND_TID_MAX 4194304u /* the guest kernel's PID_MAX_LIMIT: no tid is above it */

/* One context switch: the thread ids (the kernel's task_pid_nr; 0 is the
 * idle task) of the task that stopped and the task that ran next. */
struct rewind_switch {
    __u32 prev;
    __u32 next;
};

struct rewind_shared {
    __u64 magic;      /* guest writes REWIND_SHARED_MAGIC before registering */
    __u64 now_ns;     /* monitor: virtual ns since boot, updated every step */
    __u64 epoch_ns;   /* monitor: wall clock (ns since 1970) at now_ns == 0 */
    __u64 pending;    /* monitor ORs REWIND_PENDING_*; guest swaps to 0 */
    __u64 timer_ns;   /* guest: relative deadline for REWIND_PORT_TIMER */
    __u64 job_status; /* guest: wait(2) status of the job, or REWIND_JOB_* */
    __u64 stall_ns;   /* monitor: length of a requested stall */
    __u64 seed;       /* monitor: the run's seed (for the SDK) */
    __u64 schedule;   /* monitor: the run's schedule number */
    __u64 test_holes; /* monitor: REWIND_HOLE_* bits, only in tests (never by default) */
    __u32 req_len;    /* monitor: bytes valid in req */
    __u32 input_len;  /* monitor: bytes valid in input; guest sets 0 once read */
    __u8 req[REWIND_SHARED_REQ_MAX];
    __u8 input[REWIND_SHARED_INPUT_MAX];
    /* Context switches (see "Context switches" below). */
    __u32 sw_count; /* guest: entries valid in sw; the monitor drains them and sets 0 */
    __u32 sw_lost;  /* guest: switches not stored because sw was full; the monitor sets 0 */
    struct rewind_switch sw[REWIND_SW_MAX];
    /* Memory-access points (rewind.preempt=memory, docs/determinism.md):
     * the burst after an access point, in user instructions, written by the
     * monitor at every step of a perturbation window (a schedule decision);
     * 0 outside every window: the guest draws it from (seed, now_ns). */
    __u64 mem_burst;
    /* Faults (REWIND_PENDING_FAULT, docs/faults.md): written by the monitor
     * with the bit, at the step the schedule chose. */
    __u32 fault_kind; /* enum rewind_fault_kind */
    __u32 fault_node; /* 1..REWIND_NODES_MAX: the node, in the spec's order */
    __u64 fault_ns;   /* pause, partition, net, disk, split: its length in virtual ns;
                         clock: the step (s64); kill: 0, or the delay before the node's
                         restart */
    __u32 fault_arg;  /* net: REWIND_NET_ARG(mode, percent, delay_ms); disk: enum
                         rewind_disk_mode; split: the first side's nodes; otherwise 0 */
    __u32 fault_pad;  /* 0 */
};

/* job_status values above 0xffff are not wait statuses: */
#define REWIND_JOB_NOT_FOUND 0x10000      /* argv[0] not found in the root */
#define REWIND_JOB_NOT_EXECUTABLE 0x10001 /* found, but exec failed */
#define REWIND_JOB_INIT_FAILED 0x10002    /* rewind-init could not set up */

/* Records. */
#define REWIND_RECORD_MAX 4096
#define REWIND_RECORD_PAYLOAD_MAX (REWIND_RECORD_MAX - sizeof(struct rewind_record))

enum rewind_record_kind {
    REWIND_REC_CONSOLE = 1, /* kernel console text; aux = 0 */
    REWIND_REC_OUTPUT = 2,  /* job output; aux = fd (1 or 2) */
    REWIND_REC_EXEC = 3,    /* payload: path NUL argv0 NUL argv1 ... */
    REWIND_REC_FORK = 4,    /* aux = child pid; flags bit0 = thread */
    REWIND_REC_EXIT = 5,    /* aux = exit code; payload: comm */
    REWIND_REC_SIGNAL = 6,  /* aux = signo | si_code << 8; payload: u64 fault addr */
    REWIND_REC_OPEN = 7,    /* aux = open flags; payload: absolute path */
    REWIND_REC_UNLINK = 8,  /* payload: absolute path */
    REWIND_REC_RENAME = 9,  /* payload: old NUL new */
    REWIND_REC_MARK = 10,   /* a line written to /dev/rewind */
    REWIND_REC_ASSERT = 11, /* SDK assertion */
    REWIND_REC_INIT = 12,   /* rewind-init message; aux = enum rewind_init_event */
    REWIND_REC_SCHED = 13,  /* context switches; made by the monitor, see below */
    REWIND_REC_WRITE = 14,  /* --track-writes: aux = offset; payload: u64 len, u64 FNV-1a-64
                               of the bytes, path (guest/linux/patches/20-nix.patch) */
    REWIND_REC_ACCESS = 15, /* memory-access point (rewind.preempt=memory): aux = the address;
                               flags: REWIND_ACCESS_*; payload: u64 user instruction pointer
                               (guest/linux/patches/30-mempoint.patch) */
    REWIND_REC_FAULT = 16,  /* an injected fault (docs/faults.md): aux = enum rewind_fault_kind
                               | node << 8; payload: u64 ns (a pause's length; a clock step, s64), u32 processes
                               signalled (a kill's ns: its restart delay, 0 for none); for net,
                               disk, split, restart and lost also a u32: net's, disk's and
                               split's fault_arg, a restart's new leader pid, the bytes a power
                               cut could not undo; made by the guest kernel,
                               pid/tid = the interrupted task (a restart: PID 1) */
    REWIND_REC_KIND_MAX = 16,
};

/* Faults: what the monitor asks for (fault_kind) and what the guest kernel
 * reports in a REWIND_REC_FAULT record. */
#define REWIND_NODES_MAX 16
enum rewind_fault_kind {
    REWIND_FAULT_KILL = 1,     /* SIGKILL to every process of the node */
    REWIND_FAULT_PAUSE = 2,    /* SIGSTOP to every thread of the node for fault_ns */
    REWIND_FAULT_CONTINUE = 3, /* record only: the pause ended (SIGCONT) */
    REWIND_FAULT_PARTITION = 4, /* the node's link carries nothing for fault_ns */
    REWIND_FAULT_HEAL = 5,      /* record only: the partition ended */
    REWIND_FAULT_CLOCK = 6,     /* step the node's wall clock by fault_ns, signed (s64), in ns */
    REWIND_FAULT_NET = 7,       /* the node's link degraded as fault_arg says, for fault_ns */
    REWIND_FAULT_CLEAR = 8,     /* record only: the net fault ended */
    REWIND_FAULT_RESTART = 9,   /* record only: rewind-init restarted the node after a kill */
    REWIND_FAULT_DISK = 10,     /* the node's file writes or syncs fail as fault_arg says, for
                                   fault_ns (files matching rewind.diskglob=GLOB) */
    REWIND_FAULT_MEND = 11,     /* record only: the disk fault ended */
    REWIND_FAULT_SPLIT = 12,    /* the network splits in two sides for fault_ns: fault_arg has
                                   bit i - 1 set for node i on the first side (fault_node is its
                                   lowest); no packet crosses between nodes of the two sides */
    REWIND_FAULT_JOIN = 13,     /* record only: the split ended */
    REWIND_FAULT_POWER = 14,    /* a power cut: SIGKILL to every process of the node, as for
                                   a kill (fault_ns: 0, or its restart delay); once the last of
                                   them has exited, the node's writes made since their file's
                                   last sync are undone (files matching rewind.diskglob=; the
                                   kernel tracks writes only with rewind.power on its command
                                   line) */
    REWIND_FAULT_LOST = 15,     /* record only: a power cut's writes undone; payload u64 bytes
                                   undone (restored or cut off), u32 files changed, u32 bytes
                                   written that it could not undo */
};

/* A disk fault's fault_arg: which calls fail, and how. Calls of the node's
 * tasks on a regular file whose path (as the caller sees it) matches the
 * kernel command line's rewind.diskglob=GLOB ('*' any bytes, '/' too; '?'
 * one byte) fail before they do anything. */
enum rewind_disk_mode {
    REWIND_DISK_EIO = 1,    /* write(2), pwrite64, writev, pwritev, fallocate, fsync, fdatasync,
                               sync_file_range: -EIO */
    REWIND_DISK_ENOSPC = 2, /* write(2), pwrite64, writev, pwritev, fallocate: -ENOSPC */
    REWIND_DISK_SYNC = 3,   /* fsync, fdatasync, sync_file_range: -EIO (writes succeed) */
};

/* A net fault's fault_arg: mode, a percentage (loss, duplicate, reorder) and a
 * delay in ms (delay, reorder). The guest applies it with netem on the node's
 * two qdiscs, handle REWIND_NETEM_HANDLE(node) (rewind-init makes them when
 * /job has the netem section). */
enum rewind_net_mode {
    REWIND_NET_DELAY = 1,     /* every packet delay_ms late */
    REWIND_NET_LOSS = 2,      /* percent of the packets dropped */
    REWIND_NET_DUPLICATE = 3, /* percent of the packets sent twice */
    REWIND_NET_REORDER = 4,   /* percent of the packets sent at once, the rest delay_ms late */
};
#define REWIND_NET_ARG(mode, percent, delay_ms)                                                    \
    ((__u32)(mode) | (__u32)(percent) << 8 | (__u32)(delay_ms) << 16)
#define REWIND_NET_MODE(arg) ((arg)&0xff)
#define REWIND_NET_PERCENT(arg) (((arg) >> 8) & 0xff)  /* 0..100 */
#define REWIND_NET_DELAY_MS(arg) ((arg) >> 16)         /* 0..1000 */
#define REWIND_NETEM_HANDLE(node) ((0x7700u + (node)) << 16)

/* Restarts: when a kill's fault_ns is not 0, fault_ns of virtual time after
 * the kill the node's restart is due and the kernel sends PID 1 this
 * (real-time) signal, si_code SI_KERNEL, if PID 1 handles it; PID 1 reads
 * the nodes whose restarts are due (bit node - 1) with
 * REWIND_IOC_RESTART_DUE, starts each node's restart command in the node's
 * namespaces and names its leader with REWIND_INIT_NODE_RESTART, which the
 * kernel accepts only for a node whose restart is due and that has no
 * process left, and not while an inspection froze the guest. */
#define REWIND_SIG_RESTART 40

/* Flags of a REWIND_REC_ACCESS record. */
#define REWIND_ACCESS_WRITE 1 /* the faulting access was a write */

enum rewind_init_event {
    REWIND_INIT_JOB_START = 1, /* payload: argv0 */
    REWIND_INIT_JOB_EXIT = 2,  /* aux high bits: status via job_status */
    REWIND_INIT_ERROR = 3,     /* payload: message */
    REWIND_INIT_INSPECT_DONE = 4, /* payload: the inspector's exit status, decimal */
    REWIND_INIT_NODE_START = 5,   /* payload: "NAME PID", a node's leader (docs/faults.md) */
    REWIND_INIT_NODE_RESTART = 6, /* payload: "NAME PID", a restarted node's new leader */
};

struct rewind_record {
    __u32 len; /* header + payload bytes, <= REWIND_RECORD_MAX */
    __u16 kind;
    __u16 flags;
    __u32 pid;
    __u32 tid;
    __u64 aux;
    /* payload follows */
};

/* /dev/rewind (misc device): write() = one REWIND_REC_MARK per call (chunked),
 * ioctls below. /dev/rewind-stdout and /dev/rewind-stderr: write() = output
 * records with aux 1 and 2. /dev/rewind-stdin: read() and poll() the input
 * FIFO (see "Input" below). */
#define REWIND_IOC_MAGIC 'r'
/* Set shared->job_status (a __u64) before poweroff. */
#define REWIND_IOC_JOB_STATUS _IOW(REWIND_IOC_MAGIC, 1, __u64)
/* Emit one REWIND_REC_INIT record: struct rewind_init_msg. */
#define REWIND_IOC_INIT_MSG _IOW(REWIND_IOC_MAGIC, 2, struct rewind_init_msg)

struct rewind_init_msg {
    __u64 event; /* enum rewind_init_event */
    __u64 len;   /* bytes at text */
    __u64 text;  /* user pointer */
};

/*
 * Inspect (REWIND_PENDING_INSPECT). The monitor writes a request into
 * shared->req (req_len bytes, 1..REWIND_SHARED_REQ_MAX) and sets the bit.
 * Request: NUL-terminated strings: kind ("cat" or "shell"), pid in decimal
 * ("0": the job's main process as rewind-init started it), then for "cat"
 * the path (relative paths against that process's cwd). The kernel, in the
 * interrupt: freezes every user process but PID 1 (none of them executes
 * another user instruction; see rewind.c), keeps a copy of the request and
 * sends SIGUSR2 to PID 1. rewind-init forks an inspector that takes the
 * request with REWIND_IOC_INSPECT_REQ, works in that process's root and cwd,
 * writes what it shows to /dev/rewind-stdout (OUTPUT records, aux 1) and
 * /dev/rewind-stderr, and when it exits rewind-init emits one
 * REWIND_INIT_INSPECT_DONE record. Exit status: "cat": 0, 3 (no such file),
 * 4 (any other error, message on stderr); "shell": the shell's wait status
 * as an exit code (128 + signal if it was killed); 4 if the request or the
 * process is unusable. One inspection per run: the job stays frozen.
 */
#define REWIND_INSPECT_NOT_FOUND 3
#define REWIND_INSPECT_ERROR 4

/* Copy the latest request to buf (len bytes there). Returns its length;
 * -ENOENT if there is none, -ERANGE if len is too small. */
#define REWIND_IOC_INSPECT_REQ _IOW(REWIND_IOC_MAGIC, 3, struct rewind_inspect_req)

struct rewind_inspect_req {
    __u64 buf; /* user pointer */
    __u64 len; /* bytes at buf */
};

/*
 * Test hole only (REWIND_HOLE_HOSTILE; refused with -EPERM without it): a
 * root program breaks the platform on purpose, to test the monitor against
 * what user space cannot do. op (enum rewind_hostile_op), arg in, ret out.
 */
#define REWIND_IOC_HOSTILE _IOWR(REWIND_IOC_MAGIC, 4, struct rewind_hostile)

/* PID 1 only (else -EPERM): the nodes whose restarts are due, bit node - 1
 * (see REWIND_SIG_RESTART). */
#define REWIND_IOC_RESTART_DUE _IOR(REWIND_IOC_MAGIC, 5, __u64)

struct rewind_hostile {
    __u64 op;
    __u64 arg;
    __u64 ret;
};

enum rewind_hostile_op {
    REWIND_HOSTILE_PHYS = 1,      /* ret = guest-physical address of user address arg */
    REWIND_HOSTILE_MMIO = 2,      /* write then read 32 bits at guest-physical arg; ret = read */
    REWIND_HOSTILE_HLT = 3,       /* HLT with interrupts off: never returns */
    REWIND_HOSTILE_TRIPLE = 4,    /* empty IDT, then INT3: a triple fault */
    REWIND_HOSTILE_EXEC_MMIO = 5, /* call code at guest-physical arg, mapped as MMIO */
};

/*
 * Input (REWIND_PENDING_INPUT): the monitor writes input_len bytes
 * (1..REWIND_SHARED_INPUT_MAX) into shared->input and sets the bit, only
 * while input_len is 0; the guest appends them to a 64 KiB FIFO (dropping
 * the whole chunk if it does not fit) and sets input_len to 0. The FIFO is
 * read from /dev/rewind-stdin (blocking read, poll). Its byte stream is a
 * sequence of frames: a struct rewind_input_frame, then len payload bytes.
 * Frames may be split across chunks, but a dropped chunk only keeps the
 * stream in step if no frame spans two chunks: the monitor keeps each frame
 * within one chunk (DATA payloads of at most REWIND_SHARED_INPUT_MAX - 4).
 */
struct rewind_input_frame {
    __u8 type; /* enum rewind_input_type */
    __u8 pad;  /* 0 */
    __u16 len; /* payload bytes that follow */
};

enum rewind_input_type {
    REWIND_INPUT_DATA = 1,    /* payload: bytes typed at the terminal */
    REWIND_INPUT_WINSIZE = 2, /* payload: __u16 rows, __u16 cols */
    REWIND_INPUT_EOF = 3,     /* no payload: hang up and end the session */
};

/*
 * Stall (REWIND_PENDING_STALL): if the interrupted task is a user task
 * (not a kernel thread, not PID 1, not idle) without a stall pending, it
 * sleeps shared->stall_ns of virtual time before it next returns to user
 * mode. Otherwise the request is ignored.
 * Yield (REWIND_PENDING_YIELD): the same, but instead of sleeping the task
 * yields the CPU (sched_yield) and stays runnable: another task runs first
 * while this one keeps its place (memory-access points, sched.h).
 */

/*
 * Faults (REWIND_PENDING_FAULT, docs/faults.md). The kernel knows node i
 * (1-based, the spec's order) from the i-th REWIND_INIT_NODE_START message
 * of PID 1: its leader and every task forked from it belong to node i. In
 * the interrupt, for fault_node i already started and with a process left:
 * kill sends SIGKILL to each of its processes; pause sends a SIGSTOP to each
 * of its threads (none runs another user instruction) and, fault_ns of
 * virtual time later, SIGCONT to each process (unless an inspection froze
 * the guest meanwhile); a pause of a node already paused does nothing;
 * partition drops every packet on the node's link (its veth pair, both
 * ways) for fault_ns, so it reaches no other node and the job and none
 * reaches it; clock steps the node's wall clock (CLOCK_REALTIME and its
 * coarse twin through clock_gettime, gettimeofday, time) by fault_ns read
 * as a signed s64, |step| <= 1 h, the sum at most a day either way; its
 * monotonic clocks are untouched; net degrades the node's link (netem, its
 * qdiscs REWIND_NETEM_HANDLE) as fault_arg says for fault_ns; a kill with
 * fault_ns makes the node's restart due that much later (REWIND_SIG_RESTART).
 * Each fault done, each pause's, partition's or net fault's end and each
 * restart is one REWIND_REC_FAULT record. A fault for a node not started or
 * without processes is ignored (no record).
 */

/*
 * Context switches. The guest kernel's scheduler (the hook in __schedule(),
 * irqs off, before context_switch()) appends {prev tid, next tid} to
 * shared->sw and bumps sw_count; when sw is full it bumps sw_lost instead.
 * No port exit: at the start of every step the monitor drains the ring
 * into one REWIND_REC_SCHED record at that step (pid 0, tid 0, flags 0,
 * aux = sw_lost, payload = sw_count struct rewind_switch entries in order)
 * and sets both counters to 0. So a SCHED record at step S holds exactly
 * the switches made after step S-1 and before step S. The monitor refuses
 * sw_count above REWIND_SW_MAX and a tid above REWIND_TID_MAX, and
 * the guest may not send kind REWIND_REC_SCHED through REWIND_PORT_RECORD.
 */

#endif
