source "$TX_LIB"
tx rewind run --root '$ROOT' --expect exit=0 --expect "'file:/tmp/count~^2\$'" \
    --property "'test \$(cat /tmp/count) = 2'" -- sh -c "'echo saved; echo 1 > /tmp/count'"
tx rewind run --root '$ROOT' --expect exit=0 --expect "'file:/tmp/count~^2\$'" \
    --property "'test \$(cat /tmp/count) = 2'" -- sh -c "'echo saved; echo 2 > /tmp/count'"
exit 0 # a failing check (exit 1) is what the transcript shows
