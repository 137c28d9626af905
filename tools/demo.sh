#!/usr/bin/env bash
# demo.sh: the README's first command. Runs the bundled example (a busybox
# root) in rewind twice, through tools/kvm-host, and shows that both runs
# print the same thing and get the same run id.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd='echo "hello from rewind: $(uname -sr)"; date; sleep 3; date; echo "random: $(od -An -N4 -tu4 /dev/urandom)"'
tools/kvm-host -- sh -c "
  for i in 1 2; do
    echo \"== run \$i\"
    build/rewind run --root build/roots/test -- sh -c '$cmd'
  done"
