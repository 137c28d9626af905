#!/usr/bin/env bash
# xtrace-profile.sh DIR: where the system tests' time goes, from the traces
# that tests/system/run.sh writes with REWIND_SYSTEST_XTRACE=DIR (each
# command a test ran, with the time it started). A command's time is the
# time until the next traced command of the same test, so the time of a
# command substitution's inner commands counts once, on them.
#
# Prints, for the tests together, the seconds spent in each kind of
# command: `rewind SUBCOMMAND` by its subcommand, every other program by its
# name (shell builtins and functions of lib.sh included), the most costly
# first; then each test's total.
set -euo pipefail
dir=${1:?usage: tools/xtrace-profile.sh DIR}
ls "$dir"/*.trace >/dev/null 2>&1 || { echo "xtrace-profile: no *.trace in $dir" >&2; exit 2; }
for f in "$dir"/*.trace; do
    awk -v test="$(basename "$f" .trace)" '
    function kind(line,   w, n, i) {
        n = split(line, w, /[ \t]+/)
        # skip assignments (VAR=value cmd) and the "$REWIND" of lib.sh
        for (i = 1; i <= n && w[i] ~ /^[A-Za-z_][A-Za-z0-9_]*=/; i++) ;
        if (i > n) return "(assignment)"
        # what a wrapper runs counts as itself: command, exec, env (with its
        # assignments), and timeout with its options and duration
        for (;;) {
            if (i < n && (w[i] == "command" || w[i] == "exec" || w[i] == "env" ||
                          w[i] ~ /^[A-Za-z_][A-Za-z0-9_]*=/)) { i++; continue }
            if (i < n && w[i] ~ /(^|\/)timeout$/) {
                for (i++; i < n && w[i] ~ /^-/; i++) if (w[i] == "-k" || w[i] == "-s") i++
                i++ # the duration
                continue
            }
            break
        }
        if (w[i] ~ /(^|\/)rewind$/ && i < n) return "rewind " w[i + 1]
        sub(/.*\//, "", w[i])
        return w[i]
    }
    /^\++[0-9]+\.[0-9]+ / {
        match($0, /^\++/); rest = substr($0, RLENGTH + 1)
        ts = rest; sub(/ .*/, "", ts); cmd = rest; sub(/^[^ ]* /, "", cmd)
        if (have) { t[k] += ts - last; total += ts - last }
        k = kind(cmd); last = ts; have = 1; first = first ? first : ts
    }
    END {
        for (x in t) printf "K\t%s\t%.3f\n", x, t[x]
        printf "T\t%s\t%.1f\n", test, total
    }' "$f"
done | awk -F'\t' '
    $1 == "K" { k[$2] += $3; all += $3 }
    $1 == "T" { tests[$2] = $3 }
    END {
        printf "%-32s %9s %6s\n", "command", "seconds", "share"
        n = 0
        for (x in k) order[++n] = x
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
            if (k[order[j]] > k[order[i]]) { s = order[i]; order[i] = order[j]; order[j] = s }
        for (i = 1; i <= n && i <= 40; i++)
            printf "%-32s %9.1f %5.1f%%\n", order[i], k[order[i]], 100 * k[order[i]] / all
        printf "%-32s %9.1f\n\n", "all", all
        for (x in tests) printf "%8.1f  %s\n", tests[x], x
    }'
