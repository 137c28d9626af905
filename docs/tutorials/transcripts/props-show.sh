source "$TX_LIB"
# --epoch pinned: the default (midnight UTC today) would make the
# transcript of `show` change every day
rewind run --root "$ROOT" --epoch 2026-12-01 --expect exit=0 --property 'test $(cat /tmp/count) = 2' \
    -- sh -c 'echo saved; echo 1 > /tmp/count' >/dev/null 2>&1
tx "rewind show @ | grep -E '^(run|outcome|property)'"
tx "rewind show @ | grep '^command:' | sed 's|--root [^ ]*|--root ROOT|'"
exit 0 # a failing check (exit 1) is what the transcript shows
