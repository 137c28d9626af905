/* debugreg_test: the watchpoint pieces (aligned, at most four) and the page
 * walk over a made-up guest RAM (4 KiB and 2 MiB pages, tables outside RAM). */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "util/bytes.h"
#include "vmm/debugreg.h"
#include "vmm/gview.h"
#include "vmm/kvm.h"

static void test_split(void)
{
    uint64_t at[DEBUGREG_MAX];
    unsigned sz[DEBUGREG_MAX];
    CHECK(debugreg_split(0x1000, 8, at, sz) == 1 && at[0] == 0x1000 && sz[0] == 8, "one 8");
    CHECK(debugreg_split(0x1004, 4, at, sz) == 1 && sz[0] == 4, "one aligned 4");
    unsigned n = debugreg_split(0x1001, 7, at, sz);
    CHECK(n == 3 && at[0] == 0x1001 && sz[0] == 1 && at[1] == 0x1002 && sz[1] == 2 &&
              at[2] == 0x1004 && sz[2] == 4,
          "7 bytes at an odd address: 1 + 2 + 4");
    CHECK(debugreg_split(0x1000, 32, at, sz) == 4, "32 aligned bytes: four of 8");
    CHECK(debugreg_split(0x1001, 32, at, sz) == 0, "32 unaligned bytes need more than four");
    CHECK(debugreg_split(0x1000, 0, at, sz) == 0, "empty");
    CHECK(debugreg_split(UINT64_MAX - 2, 8, at, sz) == 0, "wraps");
    for (unsigned i = 0; i < 4 && i < n; i++)
        CHECK((at[i] & (sz[i] - 1)) == 0, "every piece aligned to its size");
}

static void put(struct kvm_vm *vm, uint64_t gpa, uint64_t v)
{
    bytes_put_u64(vm->ram + gpa, v);
}

static void test_walk(void)
{
    struct kvm_vm vm;
    memset(&vm, 0, sizeof(vm));
    vm.ram_size = 8ull << 20;
    vm.ram = calloc(1, vm.ram_size);
    if (!vm.ram) {
        SKIP("no memory");
        return;
    }
    /* cr3 0x1000 -> PDPT 0x2000 -> PD 0x3000 -> PT 0x4000 -> page 0x5000 for
     * gva 0x400000 + 0x123; PD entry 3 is a 2 MiB page at 0x600000. */
    uint64_t gva = (1ull << 39) + (2ull << 30) + (1ull << 21) + 0x123;
    put(&vm, 0x1000 + 8 * 1, 0x2000 | 1);
    put(&vm, 0x2000 + 8 * 2, 0x3000 | 1);
    put(&vm, 0x3000 + 8 * 1, 0x4000 | 1);
    put(&vm, 0x4000 + 8 * 0, 0x5000 | 1);
    put(&vm, 0x3000 + 8 * 3, 0x600000 | 1 | 1 << 7);
    memcpy(vm.ram + 0x5123, "hello", 5);
    uint64_t gpa;
    CHECK(debugreg_translate(&vm, 0x1000, gva, &gpa) == 0 && gpa == 0x5123, "4 KiB page");
    char buf[6] = {0};
    CHECK(debugreg_read(&vm, 0x1000, gva, buf, 5) == 0 && !strcmp(buf, "hello"), "read");
    uint64_t big = (1ull << 39) + (2ull << 30) + (3ull << 21) + 0x1234;
    CHECK(debugreg_translate(&vm, 0x1000, big, &gpa) == 0 && gpa == 0x601234, "2 MiB page");
    CHECK(debugreg_translate(&vm, 0x1000, gva + 4096, &gpa) < 0, "not present");
    CHECK(debugreg_read(&vm, 0x1000, gva + 4096 - 0x123 - 2, buf, 4) < 0,
          "a read across into a page not present fails");
    put(&vm, 0x4000 + 8 * 2, (64ull << 20) | 1); /* a page outside RAM */
    CHECK(debugreg_read(&vm, 0x1000, gva - 0x123 + 2 * 4096, buf, 1) < 0, "page outside RAM");
    CHECK(debugreg_translate(&vm, 1ull << 40, gva, &gpa) < 0, "cr3 outside RAM");
    /* The one walk (gos_translate through vmm/gview.h): a non-canonical
     * address is refused, as gos_vread and the spin watchdog refuse it. */
    CHECK(debugreg_translate(&vm, 0x1000, gva | (1ull << 50), &gpa) < 0, "non-canonical");
    char g2[6] = {0};
    CHECK(gview_read(&vm, 0x1000, gva, g2, 5) == 0 && !strcmp(g2, "hello"), "gview_read");
    struct gos_mem m;
    gview_mem_ro(&vm, &m);
    CHECK(!m.write && m.read(m.ctx, 0x5123, g2, 5) == 0 && m.read(m.ctx, vm.ram_size, g2, 1) < 0,
          "a read-only view: no writer, reads bounded by RAM");
    free(vm.ram);
}

int main(void)
{
    test_split();
    test_walk();
    return unit_done();
}
