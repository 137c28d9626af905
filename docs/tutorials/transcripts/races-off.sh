source "$TX_LIB"
tx rewind check --schedules 16 -j 1 --preempt off --root '$ROOT' --expect exit=0 -- /usr/bin/race_lost_update "2>/dev/null"
tx rewind run --root '$ROOT' --preempt memory -- /usr/bin/race_lost_update
exit 0 # the run with the points loses an update (exit 1): that is what it shows
