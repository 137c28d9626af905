source "$TX_LIB"
tx rewind check --schedules 64 -j 1 --root '$ROOT' --expect exit=0 -- /usr/bin/race_double_checked "2>/dev/null"
id=$(printf '%s\n' "$LAST_OUT" | sed -n 's/.*failing run: \([0-9a-f]*\) .*/\1/p')
step=$(printf '%s\n' "$LAST_OUT" | sed -n 's/^deciding step: \([0-9]*\),.*/\1/p')
[ -n "$id" ] && [ -n "$step" ] || { echo "no failing run or deciding step in the report" >&2; exit 1; }
tx rewind events "$id" --from "$((step - 3))" --to "$((step + 1))" --kind access
tx rewind where "$id" "$step"
tx_top rewind gdb "$id" "$step" -- -batch -ex "'print store'" -ex "'print instance'" -ex "'break race_double_checked.c:42'" -ex continue -ex "'print store'"
tx rewind replay "$id"
exit 0 # a failing check (exit 1) is what the transcript shows
