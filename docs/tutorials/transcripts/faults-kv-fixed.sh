source "$TX_LIB"
tx rewind check --schedules 64 -j 2 --faults kill,pause --expect exit=0 --root '$ROOT' \
    --node "'n1=kv-fixed server n1 n1 n2 n3'" --node "'n2=kv-fixed server n2 n1 n2 n3'" \
    --node "'n3=kv-fixed server n3 n1 n2 n3'" -- kv-fixed client n1 n2 n3 "2>/dev/null"
