/* elfsym.h - names from an ELF file's symbol table (libelf, elfutils):
 * the function holding an address, the address of a data symbol. Used to
 * say where a spinning guest is (src/vmm/spin.c). The file is untrusted. */
#ifndef REWIND_GUESTOS_ELFSYM_H
#define REWIND_GUESTOS_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

/* The function of the ELF file open at fd that holds addr: its name into
 * name (n bytes) and addr's offset from its start. 1 found, 0 not (no
 * symbol table, a position-independent file, no function there), -1 the
 * file is not ELF. *pie is set to 1 for an ET_DYN file (addresses need a
 * load bias this reader does not know: nothing is looked up). */
int elfsym_function(int fd, uint64_t addr, char *name, size_t n, uint64_t *off, int *pie);

/* The value of the symbol called name in the ELF file at path. 1 found,
 * 0 not, -1 not readable or not ELF. */
int elfsym_address(const char *path, const char *name, uint64_t *value);

/* Like elfsym_address, with the symbol's size (0 if it has none) and
 * whether the file is position-independent (ET_DYN: values need a load
 * bias). 1 found, 0 not, -1 not readable or not ELF. */
int elfsym_object(const char *path, const char *name, uint64_t *value, uint64_t *size, int *pie);

#endif
