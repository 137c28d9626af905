/*
 * debugreg: see debugreg.h.
 *
 * The watchpoints are the host's guest-debugging registers
 * (KVM_GUESTDBG_USE_HW_BP): KVM loads them around guest entry and intercepts
 * #DB, so a hit is a KVM_EXIT_DEBUG the guest never sees, and DR7 as the guest
 * reads it is unchanged. A data watchpoint is a trap: the exit comes after the
 * writing instruction, with the new value in memory.
 *
 * Invariants:
 *  1. Every piece armed is 1, 2, 4 or 8 bytes and aligned to its size (DR7
 *     cannot express anything else; an unaligned piece would watch the wrong
 *     bytes), and at most DEBUGREG_MAX are armed.
 *  2. Page-table entries and data are read only through kvm_gpa, which
 *     checks every guest-physical range against guest RAM: a table pointer
 *     outside RAM is "not mapped", never a read outside the mapping. The
 *     walk is guestos's (gos_translate, through vmm/gview.h), the one
 *     guest-virtual reader of the monitor.
 *  3. Nothing here writes guest memory or guest-visible registers, but
 *     debugreg_give_back (invariant 4).
 *  4. A single-step trap of the guest's own reaches the guest exactly as it
 *     would without a debugger: the same #DB at the same instruction
 *     boundary, DR6 as the guest reads it holding BS and its fixed ones
 *     (and none of the watchpoints' bits: the guest armed none), nothing
 *     else changed. A run watched or debugged is then the run stored.
 */
#include "vmm/debugreg.h"

#include <string.h>
#include <sys/ioctl.h>

#include "util/bytes.h"
#include "util/check.h"
#include "vmm/gview.h"

unsigned debugreg_split(uint64_t addr, uint64_t len, uint64_t at[DEBUGREG_MAX],
                        unsigned size[DEBUGREG_MAX])
{
    if (len == 0 || addr + len < addr)
        return 0;
    unsigned n = 0;
    while (len > 0) {
        if (n == DEBUGREG_MAX)
            return 0;
        unsigned s = 8;
        while (s > 1 && ((addr & (s - 1)) || s > len))
            s /= 2;
        RW_ASSERT(s == 1 || s == 2 || s == 4 || s == 8); /* invariant 1 */
        RW_ASSERT((addr & (s - 1)) == 0);
        at[n] = addr;
        size[n] = s;
        n++;
        addr += s;
        len -= s;
    }
    return n;
}

/* DR7's LEN field for a size (00: 1, 01: 2, 11: 4, 10: 8 bytes). */
static uint64_t len_bits(unsigned size)
{
    switch (size) {
    case 1:
        return 0;
    case 2:
        return 1;
    case 4:
        return 3;
    default:
        return 2;
    }
}

int debugreg_arm(struct kvm_vm *vm, const uint64_t *at, const unsigned *size, unsigned n)
{
    RW_ASSERT(n <= DEBUGREG_MAX); /* invariant 1 */
    struct kvm_guest_debug d;
    memset(&d, 0, sizeof(d));
    if (n) {
        d.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
        uint64_t dr7 = 1ull << 9 | 1ull << 8; /* GE, LE: exact data breakpoints */
        for (unsigned i = 0; i < n; i++) {
            RW_ASSERT((at[i] & (size[i] - 1)) == 0); /* invariant 1 */
            d.arch.debugreg[i] = at[i];
            dr7 |= 1ull << (2 * i);                   /* Li: enabled */
            dr7 |= 1ull << (16 + 4 * i);              /* R/Wi = 01: writes */
            dr7 |= len_bits(size[i]) << (18 + 4 * i); /* LENi */
        }
        d.arch.debugreg[7] = dr7;
    }
    return ioctl(vm->vcpu_fd, KVM_SET_GUEST_DEBUG, &d);
}

unsigned debugreg_fired(const struct kvm_run *run)
{
    return (unsigned)(run->debug.arch.dr6 & 0xf);
}

#define DR6_BS (1ull << 14)     /* single step */
#define DR6_FIXED 0xffff0ff0ull /* the bits DR6 reads as 1 when nothing is reported */
#define DB_VECTOR 1

int debugreg_give_back(struct kvm_vm *vm)
{
    if (!(vm->run->debug.arch.dr6 & DR6_BS))
        return 0;
    struct kvm_debugregs dr;
    struct kvm_vcpu_events ev;
    memset(&dr, 0, sizeof(dr));
    memset(&ev, 0, sizeof(ev));
    if (ioctl(vm->vcpu_fd, KVM_GET_DEBUGREGS, &dr) < 0 ||
        ioctl(vm->vcpu_fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
        return -1;
    RW_ASSERT(!ev.exception.injected && !ev.exception.pending); /* a trap ended the entry */
    dr.dr6 = DR6_FIXED | DR6_BS; /* invariant 4: what the guest's handler reads */
    ev.exception.injected = 1;
    ev.exception.nr = DB_VECTOR;
    ev.exception.has_error_code = 0;
    ev.exception.error_code = 0;
    ev.exception_has_payload = 0;
    if (ioctl(vm->vcpu_fd, KVM_SET_DEBUGREGS, &dr) < 0 ||
        ioctl(vm->vcpu_fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
        return -1;
    return 1;
}

#define PTE_P 1ull
#define PTE_PS (1ull << 7)
#define PTE_ADDR 0x000ffffffffff000ull

int debugreg_translate(const struct kvm_vm *vm, uint64_t cr3, uint64_t gva, uint64_t *gpa)
{
    struct gos g;
    memset(&g, 0, sizeof(g));
    gview_mem_ro(vm, &g.mem); /* invariants 2 and 3 */
    return gos_translate(&g, cr3, gva, gpa, NULL);
}

int debugreg_read(const struct kvm_vm *vm, uint64_t cr3, uint64_t gva, void *out, size_t n)
{
    return gview_read(vm, cr3, gva, out, n); /* invariants 2 and 3 */
}
