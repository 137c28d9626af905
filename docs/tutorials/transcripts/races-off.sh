source "$TX_LIB"
tx rewind check --schedules 16 -j 1 --preempt off --root '$ROOT' --expect exit=0 -- /usr/bin/race_lost_update "2>/dev/null"
