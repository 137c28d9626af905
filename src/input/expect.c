/*
 * expect: a run's properties as inputs (`--expect`, part of its spec):
 * which strings are valid, checked before a run starts. Judging a run by
 * them is src/explore/props.c's, which compiles their regular
 * expressions the same way (expect_regcomp).
 */
#include "input/expect.h"

#include <stdlib.h>
#include <string.h>

#include "util/fail.h"

#define fail util_fail

static const char *const outcome_words[] = {"exited",      "not-found", "not-executable",
                                            "init-failed", "panic",     "guest-error",
                                            "stalled",     "timeout",   "stopped"};

int expect_regcomp(regex_t *re, const char *ere, char *why, size_t whylen)
{
    int rc = regcomp(re, ere, REG_EXTENDED | REG_NOSUB | REG_NEWLINE);
    if (rc != 0) {
        char m[200];
        regerror(rc, re, m, sizeof(m));
        return fail(why, whylen, "bad regular expression: %s", m);
    }
    return 0;
}

int expect_valid(const char *s, char *why, size_t whylen)
{
    regex_t re;
    if (!strncmp(s, "exit=", 5)) {
        char *end;
        long v = strtol(s + 5, &end, 10);
        if (!s[5] || *end || v < 0 || v > 255)
            return fail(why, whylen, "exit= needs a status from 0 to 255");
        return 0;
    }
    if (!strncmp(s, "outcome=", 8)) {
        for (size_t i = 0; i < sizeof(outcome_words) / sizeof(*outcome_words); i++)
            if (!strcmp(s + 8, outcome_words[i]))
                return 0;
        return fail(why, whylen,
                    "outcome= needs one of exited, timeout, panic, guest-error, "
                    "stalled, not-found, not-executable, init-failed");
    }
    const char *ere = NULL;
    if (!strncmp(s, "output~", 7)) {
        ere = s + 7;
    } else if (!strncmp(s, "file:", 5)) {
        const char *t = strchr(s + 5, '~');
        if (s[5] != '/' || !t || t == s + 6)
            return fail(why, whylen, "file: needs an absolute path, '~' and a regex");
        ere = t + 1;
    } else {
        return fail(why, whylen,
                    "expected exit=N, outcome=WORD, 'output~ERE' or "
                    "'file:/PATH~ERE'");
    }
    if (expect_regcomp(&re, ere, why, whylen) < 0)
        return -1;
    regfree(&re);
    return 0;
}
