source "$TX_LIB"
tx rewind run --root '$ROOT' --spin-limit 10 -- /usr/bin/race_spin_wait
tx rewind run --root '$ROOT' --preempt memory -- /usr/bin/race_spin_wait
exit 0 # the first run ends as spin (exit 117): that is what it shows
