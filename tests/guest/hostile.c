/* hostile: a guest program that breaks the platform contract on purpose, to
 * check that the monitor refuses every breach, ends the run with a clear
 * outcome and survives (docs/guest-abi.md, tests/system/t_hostile.sh). As
 * root in the guest it reaches the platform ports with ioperm(2).
 *
 *   hostile oob    record at a guest-physical address outside RAM
 *   hostile byte   an 8-bit access to a 32-bit platform port
 *   hostile stop   an unknown stop code
 *   hostile port   an address inside the platform block that is no port
 *
 *   hostile fuzz SEED N MEM_MIB
 *       N hostile actions drawn from SEED (a failure is reproducible from
 *       the seed): records at wild, unaligned and straddling addresses with
 *       wild lengths and kinds, unassigned ports, IN, 8/16-bit and string
 *       accesses to the platform ports, unknown stop codes, the shared page
 *       registered again at wild addresses and at a copy of itself that
 *       moves from page to page, well-formed records full of garbage, port
 *       I/O and MMIO where no device is. Needs --test-hole refuse-go-on for
 *       the run to survive the first breach; with --test-hole guest-hostile
 *       it also aims records at its own memory. Ends with one line
 *         hostile: refused-expected R accepted A noise X mmio M
 *       where R is the exact number of breaches the monitor must count.
 *   hostile one SEED MEM_MIB
 *       one breach drawn from SEED after some garbage and noise; prints
 *       "hostile: breach CLASS" first. Without refuse-go-on the run ends
 *       with a guest error naming it.
 *   hostile hlt | triple | execmmio
 *       (--test-hole guest-hostile) halt with interrupts off, triple-fault,
 *       execute from MMIO: exits user space cannot cause.
 *   hostile mmio  read and write MMIO where no device is: reads all ones.
 *   hostile forge  forge rewind-init's records (any root job can): an
 *       INSPECT_DONE in a run that is no inspection and an ERROR, then a
 *       record outside RAM; the run must end on the monitor's word. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../guest/include/rewind_abi.h"

#define NPAGES 64
#define PAGE 4096u

static uint64_t rng;

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
    return (uint32_t)(next() % n);
}

/* The program's own memory, aimed at by guest-physical address (needs the
 * guest-hostile hole; phys[i] == 0 without it). */
static uint8_t *pages;
static uint64_t phys[NPAGES];
static int have_phys;
static int devfd = -1;
static uint64_t mem_bytes;
static uint64_t last_page = NPAGES; /* index of our page that is RAM's last, if any */
static unsigned long string_values; /* values sent by string OUTs (case 5 of breach) */

static int hostile_op(uint64_t op, uint64_t arg, uint64_t *ret)
{
    struct rewind_hostile h = {.op = op, .arg = arg};
    if (devfd < 0 || ioctl(devfd, REWIND_IOC_HOSTILE, &h) != 0)
        return -1;
    if (ret)
        *ret = h.ret;
    return 0;
}

static void setup_pages(void)
{
    pages = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) {
        perror("hostile: mmap");
        exit(2);
    }
    memset(pages, 0, NPAGES * PAGE);
    mlock(pages, NPAGES * PAGE);
    devfd = open("/dev/rewind", O_RDWR);
    have_phys = 1;
    for (int i = 0; i < NPAGES; i++)
        if (hostile_op(REWIND_HOSTILE_PHYS, (uint64_t)(uintptr_t)(pages + i * PAGE), &phys[i]) <
            0) {
            have_phys = 0;
            break;
        }
    for (int i = 0; have_phys && i < NPAGES; i++)
        if (phys[i] + PAGE == mem_bytes)
            last_page = (uint64_t)i;
}

/* One 32-bit OUT: one step. */
static void out32(uint16_t port, uint32_t v)
{
    outl(v, port);
}

/* A kind a guest may send: 1..REWIND_REC_KIND_MAX except the one only the
 * monitor writes (REWIND_REC_SCHED, docs/guest-abi.md), which would end
 * the run before the breach under test. */
static uint16_t guest_kind(void)
{
    uint16_t k = (uint16_t)(1 + below(REWIND_REC_KIND_MAX));
    return k == REWIND_REC_SCHED ? REWIND_REC_MARK : k;
}

static void put_header(uint8_t *at, uint32_t len, uint16_t kind, uint16_t flags)
{
    struct rewind_record r = {.len = len,
                              .kind = kind,
                              .flags = flags,
                              .pid = (uint32_t)next(),
                              .tid = (uint32_t)next(),
                              .aux = next()};
    memcpy(at, &r, sizeof(r));
}

/* A bad record in our own memory: a wild length, or a good length and a
 * kind that does not exist; at any offset (unaligned, straddling into the
 * physically next page, which may be anything). */
static void bad_own_record(void)
{
    uint32_t pg = below(NPAGES), off = below(PAGE - sizeof(struct rewind_record) + 1);
    uint8_t *at = pages + pg * PAGE + off;
    if (next() & 1) {
        static const uint32_t wild[] = {0, 1, 23, 4097, 8192, 0x7fffffff, 0xffffffff};
        uint32_t len = next() & 1 ? wild[below(7)] : (uint32_t)next();
        if (len >= sizeof(struct rewind_record) && len <= REWIND_RECORD_MAX)
            len = 0;
        put_header(at, len, guest_kind(), 0);
    } else {
        uint16_t kind = next() & 1 ? 0 : (uint16_t)(REWIND_REC_KIND_MAX + 1 + below(0xffff - 12));
        put_header(at,
                   (uint32_t)sizeof(struct rewind_record) + below(REWIND_RECORD_PAYLOAD_MAX + 1),
                   kind, (uint16_t)next());
    }
    out32(REWIND_PORT_RECORD, (uint32_t)(phys[pg] + off));
}

/* A well-formed record full of garbage: accepted and traced. Never an INIT
 * INSPECT_DONE (that ends an inspection; it is a breach test of its own). */
static void garbage_record(void)
{
    uint32_t pg = below(NPAGES), off = below(PAGE - 128) & ~7u;
    uint8_t *at = pages + pg * PAGE + off;
    uint32_t plen = below(100);
    uint16_t kind = guest_kind();
    put_header(at, (uint32_t)sizeof(struct rewind_record) + plen, kind, (uint16_t)next());
    struct rewind_record *r = (struct rewind_record *)at;
    if (kind == REWIND_REC_INIT && r->aux == REWIND_INIT_INSPECT_DONE)
        r->aux = 99;
    for (uint32_t i = 0; i < plen; i++)
        at[sizeof(*r) + i] = (uint8_t)next();
    out32(REWIND_PORT_RECORD, (uint32_t)(phys[pg] + off));
}

/* Port I/O or MMIO where no device is: not a step, not a breach. */
static int mmio_ok = 1;
static unsigned noise(void)
{
    uint16_t port;
    do
        port = (uint16_t)next();
    while (port >= REWIND_PORT_BASE && port < REWIND_PORT_BASE + REWIND_PORT_COUNT * 4 + 4);
    switch (below(4)) {
    case 0:
        outb((uint8_t)next(), port);
        return 0;
    case 1:
        if (inl(port) != 0xffffffffu) {
            fprintf(stderr, "hostile: IN from port 0x%x is not all ones\n", port);
            exit(3);
        }
        return 0;
    case 2:
        outw((uint16_t)next(), port);
        return 0;
    default: {
        uint64_t v;
        /* Above the 4 GiB root image slot: nothing is mapped there. */
        uint64_t gpa = 0x200000000ull + ((uint64_t)below(1u << 20) << 12) + (below(1024) << 2);
        if (!have_phys || hostile_op(REWIND_HOSTILE_MMIO, gpa, &v) < 0)
            return 0;
        if (v != 0xffffffffu) {
            fprintf(stderr, "hostile: MMIO read at 0x%llx gave 0x%llx\n", (unsigned long long)gpa,
                    (unsigned long long)v);
            mmio_ok = 0;
        }
        return 1;
    }
    }
}

/* The breaches, by number (the test matches the monitor's message). */
static const char *const breach_names[] = {
    "record-outside-ram",
    "record-straddles-ram-end",
    "unassigned-port",
    "in-on-platform-port",
    "narrow-out",
    "string-out",
    "unknown-stop-code",
    "shared-again-wild",
    "shared-moved",
    "own-bad-record",
    "record-runs-past-ram-end",
};

static uint32_t pick_breach(void)
{
    uint32_t c = below(have_phys ? 11 : 8);
    return c == 10 && last_page >= NPAGES ? 9 : c;
}

/* One breach of the contract: the monitor must refuse it (count it). */
static void breach(uint32_t choice)
{
    uint32_t base = REWIND_PORT_BASE;
    switch (choice) {
    case 0: { /* outside RAM: anywhere above it, or just below 4 GiB */
        uint32_t gpa = next() & 1
                           ? 0xffffffffu - below(64)
                           : (uint32_t)(mem_bytes + below((uint32_t)(0x100000000ull - mem_bytes)));
        out32(REWIND_PORT_RECORD, gpa);
        return;
    }
    case 1: /* the header straddles the end of RAM */
        out32(REWIND_PORT_RECORD,
              (uint32_t)(mem_bytes - 1 - below(sizeof(struct rewind_record) - 1)));
        return;
    case 2: { /* an address inside the block that is no port */
        uint32_t port;
        do
            port = base + below(REWIND_PORT_COUNT * 4);
        while (port % 4 == 0);
        out32((uint16_t)port, (uint32_t)next());
        return;
    }
    case 3: { /* IN of any size */
        uint16_t port = (uint16_t)(base + 4 * below(REWIND_PORT_COUNT));
        uint32_t v = below(3) == 0 ? inb(port) : below(2) ? inw(port) : inl(port);
        (void)v;
        return;
    }
    case 4: { /* 8- or 16-bit OUT */
        uint16_t port = (uint16_t)(base + 4 * below(REWIND_PORT_COUNT));
        if (next() & 1)
            outb((uint8_t)next(), port);
        else
            outw((uint16_t)next(), port);
        return;
    }
    case 5: { /* a string OUT of 2..8 values, from one page. KVM may hand
                 it over whole (one breach) or as single OUTs, one breach
                 each: every value is one the monitor refuses at its port. */
        static uint32_t vals[8] __attribute__((aligned(64)));
        static const uint16_t ports[] = {REWIND_PORT_RECORD, REWIND_PORT_STOP, REWIND_PORT_SHARED};
        uint16_t port = ports[below(3)];
        for (int i = 0; i < 8; i++)
            vals[i] = 0xfffff000u; /* outside RAM; no stop code; never a second shared page */
        uint32_t n = 2 + below(7);
        outsl(port, vals, n);
        string_values += n;
        return;
    }
    case 6:
        out32(REWIND_PORT_STOP, 4 + below(0xfffffff0u));
        return;
    case 7: /* a second registration, at a wild address */
        out32(REWIND_PORT_SHARED, (uint32_t)next());
        return;
    case 8: { /* a second registration at a page that holds the magic: the
                 "shared page" moves from page to page under the monitor */
        uint32_t pg = below(NPAGES);
        struct rewind_shared *fake = (struct rewind_shared *)(pages + pg * PAGE);
        memset(fake, 0xa5, sizeof(*fake));
        fake->magic = REWIND_SHARED_MAGIC;
        out32(REWIND_PORT_SHARED, (uint32_t)phys[pg]);
        fake->magic = 0;
        return;
    }
    case 9:
        bad_own_record();
        return;
    default: { /* a good header at the very end of RAM whose length runs past it */
        uint32_t off = PAGE - sizeof(struct rewind_record) - below(64);
        put_header(pages + last_page * PAGE + off, PAGE, REWIND_REC_MARK, 0);
        out32(REWIND_PORT_RECORD, (uint32_t)(phys[last_page] + off));
        return;
    }
    }
}

static void grant(void)
{
    if (ioperm(0, 65536, 1) != 0) {
        perror("hostile: ioperm");
        exit(2);
    }
}

static int fatal(const char *mode)
{
    setup_pages();
    uint64_t op = !strcmp(mode, "hlt")      ? REWIND_HOSTILE_HLT
                  : !strcmp(mode, "triple") ? REWIND_HOSTILE_TRIPLE
                                            : REWIND_HOSTILE_EXEC_MMIO;
    printf("hostile: %s\n", mode);
    fflush(stdout);
    if (hostile_op(op, 0x300000000ull, NULL) < 0) {
        fprintf(stderr, "hostile: REWIND_IOC_HOSTILE: %s (needs --test-hole guest-hostile)\n",
                strerror(errno));
        return 2;
    }
    printf("hostile: still running\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hostile MODE [ARGS] (see tests/guest/hostile.c)\n");
        return 2;
    }
    const char *mode = argv[1];
    if (!strcmp(mode, "hlt") || !strcmp(mode, "triple") || !strcmp(mode, "execmmio"))
        return fatal(mode);
    grant();
    if (!strcmp(mode, "mmio")) {
        setup_pages();
        uint64_t v = 0;
        if (hostile_op(REWIND_HOSTILE_MMIO, 0x300000000ull, &v) < 0) {
            perror("hostile: REWIND_IOC_HOSTILE");
            return 2;
        }
        printf("hostile: mmio read 0x%llx\n", (unsigned long long)v);
        return 0;
    }
    if (!strcmp(mode, "fuzz") || !strcmp(mode, "one")) {
        int fz = !strcmp(mode, "fuzz");
        if (argc != (fz ? 5 : 4)) {
            fprintf(stderr, "usage: hostile fuzz SEED N MEM_MIB | hostile one SEED MEM_MIB\n");
            return 2;
        }
        rng = strtoull(argv[2], NULL, 0);
        unsigned long n = fz ? strtoul(argv[3], NULL, 0) : 1;
        mem_bytes = strtoull(argv[fz ? 4 : 3], NULL, 0) << 20;
        setup_pages();
        unsigned long refused = 0, accepted = 0, noisy = 0, mmio = 0;
        unsigned long per[11] = {0};
        if (!fz) {
            for (int i = 0; i < 20; i++) {
                if (have_phys) {
                    garbage_record();
                    accepted++;
                }
                mmio += noise();
            }
            uint32_t c = pick_breach();
            printf("hostile: breach %s\n", breach_names[c]);
            fflush(stdout);
            breach(c);
            printf("hostile: still running after %s\n", breach_names[c]);
            return 0;
        }
        for (unsigned long i = 0; i < n; i++) {
            uint32_t what = below(10);
            if (what < 6) {
                uint32_t c = pick_breach();
                breach(c);
                refused++;
                per[c]++;
            } else if (what < 8 && have_phys) {
                garbage_record();
                accepted++;
            } else {
                mmio += noise();
                noisy++;
            }
        }
        for (int k = 0; k < 11; k++)
            printf("hostile: %s %lu\n", breach_names[k], per[k]);
        /* String OUTs: refused once each if KVM hands them over whole, or
         * once per value if it splits them into single OUTs. */
        printf("hostile: refused-expected %lu or-if-split %lu accepted %lu noise %lu mmio "
               "%lu%s\n",
               refused, refused - per[5] + string_values, accepted, noisy, mmio,
               mmio_ok ? "" : " MMIO-WRONG");
        return mmio_ok ? 0 : 3;
    }
    if (!strcmp(mode, "forge")) {
        int fd = open("/dev/rewind", O_RDWR);
        static const char done[] = "0", err[] = "forged by the job";
        struct rewind_init_msg m1 = {REWIND_INIT_INSPECT_DONE, sizeof(done) - 1,
                                     (uint64_t)(uintptr_t)done};
        struct rewind_init_msg m2 = {REWIND_INIT_ERROR, sizeof(err) - 1, (uint64_t)(uintptr_t)err};
        if (fd < 0 || ioctl(fd, REWIND_IOC_INIT_MSG, &m1) != 0 ||
            ioctl(fd, REWIND_IOC_INIT_MSG, &m2) != 0) {
            perror("hostile: /dev/rewind");
            return 2;
        }
        printf("hostile: still running after the forged records\n");
        fflush(stdout);
        outl(0xfffff000u, REWIND_PORT_RECORD);
        printf("hostile: still running after the bad record\n");
        return 0;
    }
    /* The first four modes (tests/system/t_trace.sh). */
    printf("hostile: %s\n", mode);
    fflush(stdout);
    if (!strcmp(mode, "oob"))
        outl(0xfffff000u, REWIND_PORT_RECORD);
    else if (!strcmp(mode, "byte"))
        outb(1, REWIND_PORT_RECORD);
    else if (!strcmp(mode, "stop"))
        outl(99, REWIND_PORT_STOP);
    else if (!strcmp(mode, "port"))
        outl(0, REWIND_PORT_BASE + 2); /* inside the block, not a port */
    printf("hostile: still running\n");
    return 0;
}
