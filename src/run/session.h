/*
 * session: the input side of `rewind shell`. Keystrokes reach the guest
 * only at IDLE steps (the shell waits for input, nothing else runs), each
 * delivery one batch of framed input (rewind_abi.h "Input") coalesced over
 * a few milliseconds of quiet (docs/guest-abi.md, "Input"). Every delivery
 * is logged as (step, bytes) in the run's `inputs` file, so the session is
 * a run like any other: replaying it hands the same bytes to the guest at
 * the same steps, whatever the timing of the keystrokes was.
 *
 * inputs file: "RWINPUT1" then records u64 step | u32 len | u32 crc32 of
 * (step, bytes) | bytes. A torn tail is ignored on replay.
 */
#ifndef REWIND_RUN_SESSION_H
#define REWIND_RUN_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/hash.h"
#include "vmm/platform.h"

struct session {
    int fd;         /* live: the keystrokes (a tty or a pipe); -1 replaying */
    FILE *log;      /* live: the inputs file being written */
    hash_ctx *hash; /* of the inputs file's records */
    uint8_t *rec;   /* replay: the whole inputs file */
    size_t rec_len, rec_off;
    uint8_t buf[REWIND_SHARED_INPUT_MAX];
    size_t len;
    int eof, failed;
    volatile sig_atomic_t *abort; /* set: stop waiting for keystrokes */
    uint64_t deliveries;
};

/* Set by the SIGWINCH handler of the caller: the next delivery carries the
 * terminal size of fd (a WINSIZE frame). */
extern volatile sig_atomic_t session_winch;
/* Set by the caller's SIGINT handler (rw_shell_end_input): the live
 * session's next delivery ends its input with an EOF frame. */
extern volatile sig_atomic_t session_end_input;

/* Live session reading fd, logging to path. 0 or -1 + err. */
int session_open_live(struct session *s, int fd, const char *path, char *err, size_t errlen);
/* Replay the inputs file at path. 0 or -1 + err. */
int session_open_replay(struct session *s, const char *path, char *err, size_t errlen);
/* At an IDLE step: deliver the next batch if there is one. Returns 1 if
 * input was handed to the guest (the guest is not idle), 0 otherwise. */
int session_on_idle(struct session *s, struct platform *p);
/* Flush and close; hex gets the SHA-256 of the inputs. 0 or -1. */
int session_close(struct session *s, char hex[65]);

/* A frame's payload fits the shared input area with its header. */
_Static_assert(REWIND_SHARED_INPUT_MAX > sizeof(struct rewind_input_frame) + 4 + 1,
               "input area too small");

#endif
