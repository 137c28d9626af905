/*
 * runinputs: a shell session's inputs file (runs/<id>/inputs, written by
 * src/run/session.c) checked against the hash its spec states
 * ("inspect": {"inputs": HEX}), which the run's id covers. verify and
 * import use it.
 */
#ifndef REWIND_HOME_RUNINPUTS_H
#define REWIND_HOME_RUNINPUTS_H

#include <stddef.h>

/* The inputs file at path ("RWINPUT1", then records of u64 step | u32 n |
 * u32 crc | n bytes, the crc over the step and the bytes) reads whole and
 * hashes to want (the SHA-256 of each record's step and bytes). 0 if so;
 * 1 with why if it is missing, damaged or hashes to another; -1 (ENOMEM)
 * if it could not be checked. */
int runinputs_check(const char *path, const char *want, char *why, size_t whylen);

#endif
