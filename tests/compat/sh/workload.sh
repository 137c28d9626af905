#!/bin/bash
# Shell workload of the compatibility suite (tests/compat/README.md): a
# coreutils pipeline, a sort of a large file, a here-doc and job control.
set -euo pipefail
cd "$(mktemp -d)"
# A pipeline of coreutils.
seq 1 5000 | awk '{ print $1 % 97, $1 }' | sort -n -k1,1 -k2,2 | cut -d' ' -f1 | uniq -c | sort -rn | head -n 3 | tr -s ' ' | sed 's/^ //' | paste -sd';' -
# A large file (100,000 lines, ~1.1 MB) sorted three ways.
seq 1 100000 | sed 's/$/ line/' | shuf --random-source=<(yes) > big.txt
wc -l < big.txt
sort -n big.txt | md5sum | cut -c1-16
sort -r -o rev.txt big.txt && head -c 100000 rev.txt | md5sum | cut -c1-16
sort -k1,1n -u big.txt | tail -n 1
# A here-doc, with and without expansion.
name=compat
cat <<EOT | tr a-z A-Z
here-doc for $name: $((6 * 7))
EOT
cat <<'EOT'
literal $name $((1+1))
EOT
# Job control: background jobs, jobs, kill %N, fg, wait. The shell's own
# notices ("[1] Terminated") go to stderr when it gets to them: not compared.
exec 3>&2 2>/dev/null
set -m
sleep 30 &
(sleep 0.05; echo "job 2 done") &
jobs | sed 's/  */ /g' | sort
kill %1
wait %1 || echo "job 1 ended with $?"
jobs >/dev/null  # takes the pending "Terminated" notice
fg %2 >/dev/null
(exit 7) &
wait $! || echo "job 3 ended with $?"
echo "jobs left: $(jobs | wc -l)"
set +m
exec 2>&3 3>&-
echo "shell: ok"
