# t_roots.sh: roots that cost nothing to reuse (rewind image, the file
# index) and guest memory up to what the host has (issue 12, item 3).

# `rewind image` prints the id a run of the same root puts in its spec; a
# second time the root is found unchanged (not built); an erofs root's id
# is the hash of its bytes.
# tier: long
test_image_ahead() {
    cp -a "$ROOTDIR" myroot
    run_rw i1 image myroot --json
    expect_rc 0
    expect_grep i1.out '"built":true'
    local id; id=$(sed -n 's/.*"id":"\([0-9a-f]\{64\}\)".*/\1/p' i1.out)
    [ -n "$id" ] || fail "no id: $(cat i1.out)"
    run_rw i2 image myroot --json
    expect_rc 0
    expect_grep i2.out "\"id\":\"$id\""
    expect_grep i2.out '"built":false'
    run_rw r run --root myroot -- /bin/true
    expect_rc 0
    run_rw s show "$(run_id r.err)" --json
    expect_grep s.out "\"image\": *\"$id\""
    # an mtime-only change (a copy, a checkout) reads the files but keeps the image
    touch myroot/etc/*
    run_rw i3 image myroot --json
    expect_grep i3.out "\"id\":\"$id\""
    expect_grep i3.out '"built":false'
    # a content change gives another image
    echo changed >> myroot/etc/hostname
    run_rw i4 image myroot
    expect_rc 0
    [ "$(cat i4.out)" != "$id" ] || fail "changed root, same id"
    run_rw e image "$ROOT"
    expect_rc 0
    [ "$(cat e.out)" = "$(sha256sum "$ROOT" | cut -d' ' -f1)" ] || fail "erofs id $(cat e.out)"
    run_rw n image nosuchroot
    expect_rc 121
    expect_grep n.err "root 'nosuchroot' does not exist"
}

# A corrupt file index is rebuilt, never trusted.
# tier: long
test_image_index_corrupt() {
    cp -a "$ROOTDIR" myroot
    sleep 3 # files younger than 2 s are not kept in the index (racy)
    run_rw a image myroot
    expect_rc 0
    local ix; ix=$(ls home/images/index/)
    [ -n "$ix" ] || fail "no file index written"
    head -c 100 /dev/urandom > "home/images/index/$ix"
    run_rw b image myroot
    expect_rc 0
    [ "$(cat a.out)" = "$(cat b.out)" ] || fail "corrupt index changed the id"
}

# --mem beyond what the host has: one clear line, exit 2.
# tier: vm
test_mem_too_big() {
    run_rw r run --root "$ROOT" --mem 262144 -- /bin/true
    expect_rc 2
    expect_grep r.err "rewind: --mem 262144 MiB is more than this host can give"
}

# RAM above the PCI hole (more than 3 GiB): the guest sees it all, the run is
# deterministic (a second run is the same run), and untouched guest memory
# costs the host nothing (the monitor's peak RSS stays far below --mem).
# tier: vm
test_mem_above_4g() {
    # A guest above 3 GiB gets a second memslot at 4 GiB: as much as the
    # test host can give, up to 8 GiB (tests/run-all.sh gives it 6 GiB).
    local avail mem; avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
    mem=$((avail - 256)); [ "$mem" -le 8192 ] || mem=8192
    [ "$mem" -gt 3136 ] || fail "MemAvailable $avail MiB: too little for a guest above 3 GiB"
    /usr/bin/time -f '%M' -o rss1 "$REWIND" run --root "$ROOT" --mem "$mem" -- /bin/cat /proc/meminfo > m1.out 2> m1.err
    local total; total=$(awk '/^MemTotal:/ {print int($2 / 1024)}' m1.out)
    [ $(( ${total:-0} * 100 )) -gt $(( mem * 90 )) ] || fail "guest MemTotal ${total:-?} MiB for --mem $mem"
    [ "${total:-0}" -gt 3072 ] || fail "guest MemTotal ${total:-?} MiB: not above 3 GiB"
    local rss; rss=$(cat rss1)
    [ "$rss" -lt 1048576 ] || fail "peak RSS $rss KiB for a guest that touched little"
    echo "peak RSS of rewind run --mem $mem -- cat /proc/meminfo: $rss KiB" >&2
    "$REWIND" run --root "$ROOT" --mem "$mem" -- /bin/cat /proc/meminfo > m2.out 2> m2.err
    same_run m1.err m2.err
    expect_no_grep m2.err "DETERMINISM VIOLATION"
    cmp m1.out m2.out || fail "the guest's meminfo differs between runs"
}
