source "$TX_LIB"
tx rewind run --root '$ROOT' --expect exit=0 -- /usr/bin/pool
id=$(rewind_last_id)
steps=$(printf '%s\n' "$LAST_OUT" | sed -n 's/.* after \([0-9]*\) steps.*/\1/p' | tail -n 1)
tx rewind check --from "$id:$((steps / 2))" --keep-going --schedules 16 -j 1 "2>/dev/null"
exit 0 # a failing check (exit 1) is what the transcript shows
