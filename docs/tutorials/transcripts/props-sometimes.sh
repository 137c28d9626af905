source "$TX_LIB"
tx rewind check --schedules 32 -j 1 --root '$ROOT' -- /usr/bin/sdk_race point "2>/dev/null"
exit 0 # a failing check (exit 1) is what the transcript shows
