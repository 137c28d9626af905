source "$TX_LIB"
# the first failing run of a check of pool-g (examples/pool, built with -g)
# and the step of its SIGSEGV
rewind check --schedules 64 -j 1 --json --root "$ROOT" -- /usr/bin/pool-g >check.json 2>/dev/null
id=$(python3 -c 'import json; print(json.load(open("check.json"))["failing_run"]["id"])')
tx rewind events "$id" --kind signal
crash=$(rewind events "$id" --kind signal --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["step"])')
line=$(grep -n '^ *done++;' "$(dirname "$TX_LIB")/../../../examples/pool/pool.c" | cut -d: -f1)
tx rewind gdb "$id" "$crash" --verify -- -batch -ex "'bt 1'" -ex "'break pool.c:$line'" \
    -ex reverse-continue -ex "'print done'" -ex "'print *t'" -ex "'bt 1'"
exit 0
