source "$TX_LIB"
tx rewind run --root '$ROOT' --node "'n1=kv server n1 n1 n2 n3'" --node "'n2=kv server n2 n1 n2 n3'" \
    --node "'n3=kv server n3 n1 n2 n3'" -- kv client n1 n2 n3
