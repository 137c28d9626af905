source "$TX_LIB"
tx rewind check --schedules 64 -j 1 --root '$ROOT' --expect exit=0 --expect "'output~^sum '" \
    -- /usr/bin/pool "2>/dev/null"
tx rewind checks
exit 0 # a failing check (exit 1) is what the transcript shows
