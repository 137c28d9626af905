source "$TX_LIB"
tx rewind run --root '$ROOT' -- /usr/bin/dbg_threads
id=$(rewind_last_id)
# a few steps after the program printed "ready": every thread is blocked
ready=$(rewind events "$id" --kind output --json | python3 -c '
import json, sys
print([e["step"] for e in json.load(sys.stdin) if "ready" in e["payload"]][0])')
at=$((ready + 5))
tx rewind where "$id" "$at"
tx_top rewind gdb "$id" "$at" --verify -- -batch -ex "'break bump'" -ex continue -ex "'print i'" \
    -ex bt -ex continue -ex "'print i'" -ex next -ex "'watch counter'" -ex continue \
    -ex "'delete 2'" -ex reverse-continue -ex "'print i'"
exit 0
