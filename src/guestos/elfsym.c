/*
 * elfsym: see elfsym.h.
 *
 * Invariants:
 *  1. Only the symbol tables are read, through libelf, which checks section
 *     bounds; a name is copied with its length bounded by the caller's n.
 *  2. A function symbol holds addr only when value <= addr < value + size
 *     (size 0: only addr == value); nothing is guessed from a neighbour.
 */
#include "guestos/elfsym.h"

#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/check.h"

/* libelf's version, set once per process (pthread_once: reentrant). */
static int elf_ok;
static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_init(void)
{
    elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

static int elf_ready(void)
{
    pthread_once(&elf_once, elf_init);
    return elf_ok;
}

/* Call fn on every symbol of e's SYMTAB (else DYNSYM); stops when fn returns 1. */
static int each_symbol(Elf *e, int (*fn)(void *ctx, const GElf_Sym *s, const char *name), void *ctx)
{
    static const GElf_Word kinds[] = {SHT_SYMTAB, SHT_DYNSYM};
    for (size_t k = 0; k < 2; k++) {
        Elf_Scn *scn = NULL;
        int seen = 0;
        while ((scn = elf_nextscn(e, scn)) != NULL) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != kinds[k] || !sh.sh_entsize)
                continue;
            seen = 1;
            Elf_Data *d = elf_getdata(scn, NULL);
            size_t count = d ? d->d_size / sh.sh_entsize : 0;
            for (size_t i = 0; i < count; i++) {
                GElf_Sym s;
                if (!gelf_getsym(d, (int)i, &s))
                    continue;
                const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
                if (nm && *nm && fn(ctx, &s, nm))
                    return 1;
            }
        }
        if (seen)
            return 0; /* a symbol table without it: the dynamic one is a subset */
    }
    return 0;
}

struct fn_find {
    uint64_t addr;
    char *name;
    size_t n;
    uint64_t off;
};

static int match_function(void *ctx, const GElf_Sym *s, const char *name)
{
    struct fn_find *f = ctx;
    if (GELF_ST_TYPE(s->st_info) != STT_FUNC || s->st_value > f->addr)
        return 0;
    uint64_t end = s->st_value + (s->st_size ? s->st_size : 1);
    if (f->addr >= end) /* invariant 2 */
        return 0;
    snprintf(f->name, f->n, "%s", name); /* invariant 1 */
    f->off = f->addr - s->st_value;
    return 1;
}

int elfsym_function(int fd, uint64_t addr, char *name, size_t n, uint64_t *off, int *pie)
{
    RW_ASSERT(name && n > 0 && off && pie);
    name[0] = 0;
    *pie = 0;
    if (!elf_ready())
        return -1;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    if (!e)
        return -1;
    GElf_Ehdr eh;
    int rc = -1;
    if (elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh)) {
        rc = 0;
        if (eh.e_type == ET_DYN)
            *pie = 1;
        else {
            struct fn_find f = {.addr = addr, .name = name, .n = n};
            rc = each_symbol(e, match_function, &f);
            *off = f.off;
        }
    }
    elf_end(e);
    return rc;
}

struct addr_find {
    const char *want;
    uint64_t value, size;
};

static int match_name(void *ctx, const GElf_Sym *s, const char *name)
{
    struct addr_find *f = ctx;
    if (strcmp(name, f->want))
        return 0;
    f->value = s->st_value;
    f->size = s->st_size;
    return 1;
}

int elfsym_address(const char *path, const char *name, uint64_t *value)
{
    if (!elf_ready())
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int rc = -1;
    if (e && elf_kind(e) == ELF_K_ELF) {
        struct addr_find f = {.want = name};
        rc = each_symbol(e, match_name, &f);
        *value = f.value;
    }
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}

int elfsym_object(const char *path, const char *name, uint64_t *value, uint64_t *size, int *pie)
{
    if (!elf_ready())
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    int rc = -1;
    if (e && elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh)) {
        struct addr_find f = {.want = name};
        rc = each_symbol(e, match_name, &f);
        *value = f.value;
        *size = f.size;
        *pie = eh.e_type == ET_DYN;
    }
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}
