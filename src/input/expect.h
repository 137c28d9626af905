/*
 * expect: see expect.c.
 */
#ifndef REWIND_INPUT_EXPECT_H
#define REWIND_INPUT_EXPECT_H

#include <regex.h>
#include <stddef.h>

/* 0 if s is a valid --expect string ("exit=N", "outcome=WORD",
 * "output~ERE", "file:/PATH~ERE"), else -1 with why. */
int expect_valid(const char *s, char *why, size_t whylen);

/* Compile the extended regular expression ere as properties match it
 * (no sub-matches, newline-sensitive). 0, or -1 with why. */
int expect_regcomp(regex_t *re, const char *ere, char *why, size_t whylen);

#endif
