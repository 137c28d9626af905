source "$TX_LIB"
tx 'rewind repro --vary epoch --epoch 2026-01-01 --root $ROOT --collect /o -- sh -c "mkdir /o; date +%F > /o/stamp" 2>/dev/null'
tx 'rewind check --vary dirorder --schedules 2 -j 1 --root $ROOT -- sh -c "mkdir /d; touch /d/a /d/b /d/c /d/d /d/e /d/f; /usr/bin/find /d" 2>/dev/null'
exit 0
