/*
 * rewind_check.h: RW_ASSERT(cond), the assertion of a numbered invariant,
 * for the engine (through src/util/check.h) and for the front ends, which
 * see include/ only. It stays on in every build; a failed assertion names
 * the file, line and condition on stderr and aborts (src/util/check.h says
 * what may be asserted and what must be reported instead).
 */
#ifndef REWIND_CHECK_H
#define REWIND_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

#define RW_ASSERT(cond) ((cond) ? (void)0 : rw_check_failed(__FILE__, __LINE__, __func__, #cond))

_Noreturn void rw_check_failed(const char *file, int line, const char *func, const char *cond);

#ifdef __cplusplus
}
#endif

#endif
