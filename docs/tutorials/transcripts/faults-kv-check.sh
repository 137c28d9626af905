source "$TX_LIB"
tx rewind check --schedules 8 -j 1 --faults kill --expect exit=0 --root '$ROOT' \
    --node "'n1=kv server n1 n1 n2 n3'" --node "'n2=kv server n2 n1 n2 n3'" \
    --node "'n3=kv server n3 n1 n2 n3'" -- kv client n1 n2 n3 "2>/dev/null"
fail=$(printf '%s\n' "$LAST_OUT" | sed -n 's/.*failing run: \([0-9a-f]*\) (exited 1)$/\1/p')
tx rewind events "$fail" --kind fault
tx rewind log "$fail"
exit 0 # a failing check (exit 1) is what the transcript shows
