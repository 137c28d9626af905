# Networking: the loopback device is up for IPv4 and IPv6 before the job
# starts, `localhost` resolves, TCP, UDP and unix sockets work between the
# job's processes, runs that use them are deterministic, and no other network
# device exists (docs/networking.md).

# tier: long
test_loopback_is_up() {
    run_rw r run --root "$ROOT" -- sh -c 'ls /sys/class/net; ip addr show lo'
    expect_rc 0
    [ "$(head -n 1 r.out)" = lo ] || fail "devices: $(head -n 1 r.out)"
    expect_grep r.out '^1: lo: <LOOPBACK,UP'
    expect_grep r.out 'inet 127.0.0.1/8 scope host lo'
    expect_grep r.out 'inet6 ::1/128 scope host'
}

# tier: vm
test_nothing_leaves_the_vm() {
    run_rw r run --root "$ROOT" -- sh -c 'ls /sys/class/net; ip route; nc 192.0.2.1 80 </dev/null 2>&1; echo "nc $?"'
    expect_rc 0
    [ "$(head -n 1 r.out)" = lo ] || fail "a device other than lo: $(head -n 1 r.out)"
    expect_no_grep r.out default
    expect_grep r.out 'Network is unreachable'
    expect_grep r.out '^nc 1$'
    run_rw s show "$(run_id r.err)"
    expect_rc 0
    expect_grep s.out '^network:  loopback only .*nothing leaves the VM'
}

# tier: vm
test_tcp_over_loopback() {
    run_rw r run --root "$ROOT" -- /usr/bin/net_tcp
    expect_rc 0
    expect_grep r.out '^tcp4 127.0.0.1 ok$'
    expect_grep r.out '^tcp6 ::1 ok$'
    [ "$(grep -c ': 98321 bytes, hash ' r.out)" -eq 6 ] || fail "not 6 transfers: $(cat r.out)"
}

# tier: long
test_udp_over_loopback() {
    run_rw r run --root "$ROOT" -- /usr/bin/net_udp
    expect_rc 0
    expect_grep r.out '^udp4 127.0.0.1 port [0-9]* from port [0-9]*: 100 datagrams, 391582 bytes ok$'
    expect_grep r.out '^udp6 ::1 port [0-9]* from port [0-9]*: 100 datagrams, 391582 bytes ok$'
}

# tier: long
test_unix_sockets() {
    run_rw r run --root "$ROOT" -- /usr/bin/net_unix
    expect_rc 0
    expect_grep r.out '^unix stream pair: 50 round trips ok$'
    expect_grep r.out '^unix datagram pair: boundaries kept$'
    expect_grep r.out "passed fd reads 'through a passed fd' ok"
    expect_grep r.out "^unix abstract datagram: 'hello' ok$"
}

# The test root has no /etc/hosts and no /etc/nsswitch.conf: rewind-init
# writes both into the overlay; a static glibc program and busybox resolve.
# tier: long
test_localhost_resolves() {
    run_rw r run --root "$ROOT" -- /usr/bin/net_resolve
    expect_rc 0
    expect_grep r.out '^any localhost: 127.0.0.1.* ok$'
    expect_grep r.out '^ipv4 localhost: 127.0.0.1 ok$'
    expect_grep r.out '^ipv6 localhost: ::1 ok$'
    run_rw p run --root "$ROOT" -- sh -c 'ping -c 1 localhost && ping6 -c 1 localhost'
    RC=$RC; [ "$RC" -eq 0 ] || fail "ping localhost: rc $RC: $(cat p.out p.err | head -5)"
    expect_grep p.out '^64 bytes from 127.0.0.1: seq=0'
    expect_grep p.out '^64 bytes from ::1: seq=0'
}

# tier: long
test_http_round_trip_over_localhost() {
    run_rw r run --root "$ROOT" -- sh -c 'mkdir /tmp/www && echo "served in the VM" > /tmp/www/index.html &&
        httpd -p 127.0.0.1:8080 -h /tmp/www && wget -q -O - http://localhost:8080/index.html'
    expect_rc 0
    expect_file r.out "served in the VM"
}

# tier: long
test_hosts_file_only_when_missing() {
    run_rw r run --root "$ROOT" -- cat /etc/hosts /etc/nsswitch.conf
    expect_rc 0
    expect_grep r.out '^127.0.0.1	localhost$'
    expect_grep r.out '^::1	localhost '
    expect_grep r.out '^hosts: files dns$'
    # A root's own files are kept as they are, even without localhost.
    cp -a "$ROOTDIR" myroot
    printf '192.0.2.7\telsewhere\n' >myroot/etc/hosts
    printf 'hosts: files\n' >myroot/etc/nsswitch.conf
    run_rw m run --root myroot -- cat /etc/hosts /etc/nsswitch.conf
    expect_rc 0
    expect_file m.out "$(printf '192.0.2.7\telsewhere\nhosts: files')"
    # A symlink (here a dangling one) is the root's too.
    rm myroot/etc/hosts && ln -s /run/hosts myroot/etc/hosts
    run_rw l run --root myroot -- readlink /etc/hosts
    expect_rc 0
    expect_file l.out /run/hosts
}

# TCP and UDP runs are runs like any other: the replay (the spec run again
# from boot, every record, the output's too, the steps and the final RAM
# compared) is identical; another seed moves the ephemeral ports (so the
# identical replay is not identical by accident).
# tier: vm
test_network_runs_are_deterministic() {
    local job='/usr/bin/net_tcp && /usr/bin/net_udp && /usr/bin/net_resolve'
    run_rw a run --root "$ROOT" -- sh -c "$job"
    expect_rc 0
    local id; id=$(run_id a.err)
    run_rw p replay "$id"
    [ "$RC" -eq 0 ] || fail "replay: rc $RC: $(cat p.out p.err | tail -n 3)"
    expect_grep p.out '^identical'
    run_rw s run --root "$ROOT" --seed 7 -- sh -c "$job"
    expect_rc 0
    [ "$(run_id s.err)" != "$id" ] || fail "same id with another seed"
    [ "$(grep port a.out)" != "$(grep port s.out)" ] || fail "same ports with another seed"
}

# Negative twin of test_network_runs_are_deterministic (docs/determinism.md,
# "Negative twins"): the host-rng hole seeds the guest kernel's RNG from the
# host, and the network stack draws its secrets from that RNG (net_secret:
# ephemeral ports and TCP initial sequence numbers). The loopback workload's
# ports then change from run to run with one spec, and the determinism
# check must report it, naming a step.
# tier: vm
test_network_hole_is_caught() {
    export REWIND_TEST_HOLES=1
    hole_caught n 4 --timeout 120 --test-hole host-rng --root "$ROOT" -- sh -c '/usr/bin/net_tcp && /usr/bin/net_udp'
    local a=n1.out b=n$CAUGHT.out
    grep -q '^udp6 ::1 port .* ok$' $a && grep -q '^udp6 ::1 port .* ok$' $b ||
        fail "the workload failed: $(tail -n 3 $a $b)"
    # the hole reached the network: the ports the kernel chose differ
    [ "$(grep -o 'port [0-9]*' $a)" != "$(grep -o 'port [0-9]*' $b)" ] ||
        fail "the same ports in both runs: the difference is not in the network"
}
