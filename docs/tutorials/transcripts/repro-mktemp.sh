source "$TX_LIB"
tx 'rewind repro --vary seed --root $ROOT --collect /build/out -- sh -c '"'"'mkdir -p /build/out; t=$(mktemp /tmp/tmp.XXXXXX); echo "built in $t" > /build/out/info'"'"' 2>/dev/null'
tx 'rewind repro --vary none --root $ROOT --collect /build/out -- sh -c '"'"'mkdir -p /build/out; t=$(mktemp /tmp/tmp.XXXXXX); echo "built in $t" > /build/out/info'"'"' 2>/dev/null'
exit 0
