source "$TX_LIB"
tx rewind check --schedules 64 -j 1 --preempt off --root '$ROOT' -- /usr/bin/sdk_race point "2>/dev/null"
# the failing run and the deciding step, from the report just printed
id=$(printf '%s\n' "$LAST_OUT" | sed -n 's/.*failing run: \([0-9a-f]*\) .*/\1/p')
step=$(printf '%s\n' "$LAST_OUT" | sed -n 's/^deciding step: \([0-9]*\),.*/\1/p')
[ -n "$id" ] && [ -n "$step" ] || { echo "no failing run or deciding step in the report" >&2; exit 1; }
tx rewind events "$id" --from "$((step - 1))" --to "$((step + 2))"
tx rewind sched "$id" --from "$((step - 1))" --to "$((step + 3))"
tx rewind asserts "$id"
tx rewind replay "$id"
exit 0 # a failing check (exit 1) is what the transcript shows
