/*
 * gdbprogmem_test: the program's read-only segments served from its file
 * (src/gdbstub/progmem.c, a front end's module, compiled in here): bytes of
 * a read-only segment's file part, never of a writable segment or past a
 * segment's file part, only for a process whose auxiliary vector fits the
 * program (fixed-address and position-independent), a bad ELF refused.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdbstub/progmem.c"
#include "unit.h"

#define TEXT_OFF 0x1000
#define DATA_OFF 0x2000

/* An ELF file: the headers in the first page (mapped read-only with the
 * text at 0x400000..), text at TEXT_OFF (0x401000, 0x100 bytes), a
 * writable segment at DATA_OFF (0x403000, 0x80 bytes). */
static void make_elf(const char *path, int type, uint64_t data_vaddr)
{
    static unsigned char f[0x3000];
    memset(f, 0, sizeof(f));
    uint64_t base = type == ET_EXEC ? 0x400000 : 0;
    Elf64_Ehdr *e = (Elf64_Ehdr *)f;
    memcpy(e->e_ident, ELFMAG, SELFMAG);
    e->e_ident[EI_CLASS] = ELFCLASS64;
    e->e_type = (uint16_t)type;
    e->e_machine = EM_X86_64;
    e->e_entry = base + 0x1010;
    e->e_phoff = sizeof(*e);
    e->e_phentsize = sizeof(Elf64_Phdr);
    e->e_phnum = 3;
    Elf64_Phdr *ph = (Elf64_Phdr *)(f + sizeof(*e));
    ph[0] = (Elf64_Phdr){.p_type = PT_LOAD,
                         .p_flags = PF_R,
                         .p_offset = 0,
                         .p_vaddr = base,
                         .p_filesz = 0x200,
                         .p_memsz = 0x200};
    ph[1] = (Elf64_Phdr){.p_type = PT_LOAD,
                         .p_flags = PF_R | PF_X,
                         .p_offset = TEXT_OFF,
                         .p_vaddr = base + 0x1000,
                         .p_filesz = 0x100,
                         .p_memsz = 0x100};
    ph[2] = (Elf64_Phdr){.p_type = PT_LOAD,
                         .p_flags = PF_R | PF_W,
                         .p_offset = DATA_OFF,
                         .p_vaddr = base + data_vaddr,
                         .p_filesz = 0x80,
                         .p_memsz = 0x1000};
    for (int i = 0; i < 0x1000; i++) {
        f[TEXT_OFF + i] = (unsigned char)(i + 1);
        f[DATA_OFF + i] = 0xdd;
    }
    FILE *o = fopen(path, "wb");
    CHECK(o && fwrite(f, 1, sizeof(f), o) == sizeof(f) && fclose(o) == 0, "write the ELF");
}

int main(void)
{
    char path[] = "/tmp/gdbprogmem-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    struct gdbs_progmem pm;
    unsigned char b[64];

    /* a fixed-address program: AT_ENTRY and AT_PHDR as the kernel sets them */
    make_elf(path, ET_EXEC, 0x3000);
    CHECK(gdbs_progmem_open(&pm, path) == 0 && pm.nseg == 2, "open: two read-only segments");
    uint64_t en = 0x401010, ph = 0x400040;
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x401000, b, 16) == 16 && b[0] == 1 && b[15] == 16,
          "text from the file");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x4010f0, b, 16) == 16 && b[15] == 0x100 % 256,
          "the text's last bytes");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x4010f8, b, 16) == 0, "across the text's end: nothing");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x401100, b, 1) == 0, "past the file part: nothing");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x403000, b, 16) == 0, "a writable segment: nothing");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x404000, b, 16) == 0, "its .bss: nothing");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x400000, b, 4) == 4 && !memcmp(b, ELFMAG, 4),
          "the headers' read-only page");
    CHECK(gdbs_progmem_read(&pm, en + 0x1000, ph + 0x1000, 0x402000, b, 16) == 0,
          "another placement of a fixed-address program: nothing");
    CHECK(gdbs_progmem_read(&pm, 0x401234, ph, 0x401000, b, 16) == 0, "another entry: nothing");
    CHECK(gdbs_progmem_read(&pm, en, 0x400080, 0x401000, b, 16) == 0, "other headers: nothing");
    gdbs_progmem_close(&pm);
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x401000, b, 16) == 0, "closed: nothing");

    /* a position-independent program, placed at a page-aligned bias */
    make_elf(path, ET_DYN, 0x3000);
    CHECK(gdbs_progmem_open(&pm, path) == 0 && pm.pie, "open a PIE");
    uint64_t bias = 0x7f0000000000;
    CHECK(gdbs_progmem_read(&pm, bias + 0x1010, bias + 0x40, bias + 0x1004, b, 4) == 4 && b[0] == 5,
          "PIE text at its bias");
    CHECK(gdbs_progmem_read(&pm, bias + 0x1010, bias + 0x40, 0x1004, b, 4) == 0,
          "PIE text at its unrelocated address: nothing");
    CHECK(gdbs_progmem_read(&pm, bias + 0x1018, bias + 0x48, bias + 0x1004, b, 4) == 0,
          "a bias that is not page-aligned: nothing");
    CHECK(gdbs_progmem_read(&pm, bias + 0x1010, bias + 0x40, bias + 0x3000, b, 4) == 0,
          "PIE writable segment: nothing");
    gdbs_progmem_close(&pm);

    /* a writable segment sharing the text's page: the process maps that
     * page writable, so the text is not served (invariant 1) */
    make_elf(path, ET_EXEC, 0x1f00);
    CHECK(gdbs_progmem_open(&pm, path) == 0 && pm.nseg == 1, "open: the text dropped");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x401000, b, 16) == 0, "text on a writable page: nothing");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x400000, b, 4) == 4, "the headers' page still served");
    CHECK(gdbs_progmem_read(&pm, 0, 0, 0x400000, b, 4) == 0, "no auxiliary vector: nothing");
    gdbs_progmem_close(&pm);

    /* headers past the file's end */
    make_elf(path, ET_EXEC, 0x3000);
    Elf64_Ehdr eh;
    FILE *x = fopen(path, "r+b");
    CHECK(x && fread(&eh, sizeof(eh), 1, x) == 1, "read the header");
    eh.e_phoff = 0x2ff0;
    CHECK(fseek(x, 0, SEEK_SET) == 0 && fwrite(&eh, sizeof(eh), 1, x) == 1 && fclose(x) == 0,
          "move the program headers to the file's end");
    CHECK(gdbs_progmem_open(&pm, path) < 0 && pm.fd < 0, "headers past the end are refused");

    /* not an ELF program */
    FILE *o = fopen(path, "wb");
    CHECK(o && fputs("#!/bin/sh\n", o) >= 0 && fclose(o) == 0, "write a script");
    CHECK(gdbs_progmem_open(&pm, path) < 0 && pm.fd < 0, "a script is refused");
    CHECK(gdbs_progmem_read(&pm, en, ph, 0x401000, b, 16) == 0, "refused: nothing");
    unlink(path);
    return unit_done();
}
