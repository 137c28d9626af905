source "$TX_LIB"
JOB='n=$(od -An -N1 -tu1 /dev/urandom); echo $n; test $((n % 4)) -ne 0'
tx rewind check --vary seed --keep-going --schedules 8 -j 1 --root '$ROOT' --expect exit=0 \
    -- sh -c "'$JOB'"
exit 0 # a failing check (exit 1) is what the transcript shows
