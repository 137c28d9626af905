source "$TX_LIB"
tx rewind run --root '$ROOT' -- /usr/bin/watchctr
id=$(rewind_last_id)
pid=$(printf '%s\n' "$LAST_OUT" | sed -n 's/^watchctr pid=\([0-9]*\).*/\1/p')
tx rewind watch "$id" counter --pid "$pid"
exit 0
