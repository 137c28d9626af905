source "$TX_LIB"
tx rewind run --root '$ROOT' -- /usr/bin/pingpong
id=$(rewind_last_id)
first=$(rewind events "$id" --kind output --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["step"])')
tx rewind sched "$id" --from "$first" --to "$((first + 12))"
tx "rewind ps $id $((first + 3))"
