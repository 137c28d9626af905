source "$TX_LIB"
tx rewind run --root '$ROOT' -- /usr/bin/sdk_race
tx rewind check --schedules 64 -j 1 --preempt off --root '$ROOT' -- /usr/bin/sdk_race "2>/dev/null"
exit 0
