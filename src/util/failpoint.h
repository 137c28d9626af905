/*
 * failpoint: named places where a test build of rewind can be killed, to
 * test that a crash at any write, fsync or rename loses nothing
 * (tests/system/t_crash.sh, tests/fuzz/README.md's sibling in
 * docs/testing.md).
 *
 * RW_FAILPOINT("area.step") expands to nothing unless the build defines
 * RW_FAILPOINTS; only build/rewind-fp does (the same sources, that flag).
 * There, with REWIND_FAILPOINT=NAME[:K] in the environment, the process
 * SIGKILLs itself (a crash: no atexit, no buffered output flushed) at the
 * K-th time (default 1) any thread reaches the failpoint NAME.
 * REWIND_FAILPOINT=list prints every failpoint compiled in, one per line,
 * and exits 0: the names are collected by the linker from a section, so a
 * failpoint added anywhere is listed without being registered by hand.
 * REWIND_FAILPOINT_COUNT=FILE appends "NAME\n" to FILE at every hit (to
 * learn which failpoints a scenario reaches, and how often).
 *
 * Invariants:
 *  1. Without RW_FAILPOINTS a failpoint is no code at all.
 *  2. Every RW_FAILPOINT site puts its name into the section rw_failpoints,
 *     so the list is complete by construction.
 *  3. The kill happens before the step the name stands for: a failpoint
 *     named after an operation is "crashed just before it" (and so "just
 *     after the one before").
 */
#ifndef REWIND_UTIL_FAILPOINT_H
#define REWIND_UTIL_FAILPOINT_H

#ifdef RW_FAILPOINTS
void failpoint_hit(const char *name);
#define RW_FAILPOINT(name)                                                                         \
    do {                                                                                           \
        static const char *const failpoint_name_ __attribute__((used, section("rw_failpoints"))) = \
            (name);                                                                                \
        failpoint_hit(failpoint_name_);                                                            \
    } while (0)
#else
#define RW_FAILPOINT(name)                                                                         \
    do {                                                                                           \
    } while (0)
#endif

#endif
