# Boot issue: a command runs in the VM, its output and status come back.

# One run proves the plain things a command's run keeps (each once a run of
# its own): its output and exit status come back, stdout and stderr apart,
# --cwd and -e, none of the host's environment, and /dev/fd and
# /dev/std{in,out,err} exist as on any Linux (bash's <(...), `echo >
# /dev/stderr`: init makes the links devtmpfs lacks).
# tier: vm
test_output_status_env_cwd_and_dev_fd() {
    SECRET_HOST_VAR=leak run_rw r run --root "$ROOT" --cwd /etc -e FOO=bar -e 'SP=a b' -- sh -c '
        echo hello world; echo to-out; echo to-err >&2; echo out2
        pwd; echo "$FOO|$SP|$HOME"; echo "[$SECRET_HOST_VAR]"
        echo to-out2 >/dev/stdout; echo to-err2 >/dev/stderr
        readlink /dev/fd; readlink /dev/stdin; echo piped | cat /dev/stdin
        ls /dev/fd/ | grep -qx 2 && echo fd2
        exit 3'
    expect_rc 3
    expect_file r.out "$(printf 'hello world\nto-out\nout2\n/etc\nbar|a b|/root\n[]\nto-out2\n/proc/self/fd\n/proc/self/fd/0\npiped\nfd2')"
    expect_grep r.err '^to-err$'
    expect_grep r.err '^to-err2$'
    expect_no_grep r.err 'to-out'
    expect_grep r.err '^rewind: run [0-9a-f]\{16\} exited:3 after [0-9]* steps, [0-9.]*s virtual, [0-9.]*s wall$'
}

# tier: vm
test_killed_by_signal() {
    run_rw r run --root "$ROOT" -- sh -c 'kill -SEGV $$'
    expect_rc 139
}

# tier: vm
test_tar_and_dir_roots_agree() {
    tar -C "$ROOTDIR" -cf root.tar .
    run_rw d run --root "$ROOTDIR" -- sh -c 'ls -l /bin | wc -l; cat /etc/passwd'
    run_rw t run --root root.tar -- sh -c 'ls -l /bin | wc -l; cat /etc/passwd'
    [ -s d.out ] || fail "no output"
    cmp d.out t.out || fail "outputs differ"
    same_run d.err t.err
    run_rw e run --root "$ROOT" -- sh -c 'ls -l /bin | wc -l; cat /etc/passwd'
    same_run d.err e.err || fail "the erofs image of the same tree gives another id"
}

# tier: vm
test_writes_stay_in_vm() {
    small_root myroot
    run_rw r run --root myroot -- sh -c 'echo x > /etc/written; rm /etc/passwd; cat /etc/written; ls /etc/passwd 2>&1'
    expect_rc 1
    expect_grep r.out '^x$'
    [ ! -e myroot/etc/written ] || fail "a write reached the host"
    [ -e myroot/etc/passwd ] || fail "an unlink reached the host"
}

# tier: vm
test_sleep_is_virtual() {
    run_rw a run --root "$ROOT" -- true
    run_rw r run --root "$ROOT" -- sleep 5
    expect_rc 0
    local v w wt; v=$(virt_of r.err); w=$(wall_of r.err); wt=$(wall_of a.err)
    awk -v v="$v" 'BEGIN{exit !(v >= 5.0)}' || fail "virtual time $v < 5 s"
    # sleep 5 costs (almost) no wall time beyond booting: compare with `true`.
    awk -v w="$w" -v t="$wt" 'BEGIN{exit !(w - t < 2.0)}' || fail "sleep 5 took $w s wall vs $wt s for true"
}

# tier: engine
test_missing_root() {
    run_rw r run --root /nonexistent/root -- true
    expect_rc 121
    [ "$(wc -l < r.err)" -eq 1 ] || fail "more than one line: $(cat r.err)"
    expect_grep r.err 'rewind: .*nonexistent'
}

# tier: vm
test_command_not_found() {
    run_rw r run --root "$ROOT" -- /no/such/cmd
    expect_rc 127
    expect_grep r.err 'no/such/cmd'
    run_rw r2 run --root "$ROOT" -- nosuchcommand
    [ "$RC" -eq 127 ] || fail "PATH lookup: rc $RC"
    expect_grep r2.err 'nosuchcommand'
}

# tier: vm
test_not_executable() {
    small_root myroot
    echo 'not a program' > myroot/bin/notexec; chmod 644 myroot/bin/notexec
    run_rw r run --root myroot -- /bin/notexec
    expect_rc 126
}

# tier: engine
test_bad_flags() {
    run_rw r run --mem 1 --root "$ROOT" -- true
    expect_rc 2
    run_rw r run --root "$ROOT"
    expect_rc 2
    run_rw r frobnicate
    expect_rc 2
}

# tier: vm
test_timeout_on_spin() {
    run_rw r run --root "$ROOT" --timeout 3 -- sh -c 'while :; do :; done'
    expect_rc 124
    expect_grep r.err 'timeout'
}

# tier: vm
test_guest_panic() {
    run_rw r run --root "$ROOT" -- sh -c 'echo c > /proc/sysrq-trigger'
    expect_rc 123
    expect_grep r.err 'panic'
}

# tier: engine
test_no_kvm() {
    command -v unshare >/dev/null || skip "unshare is missing"
    [ "$(id -u)" -eq 0 ] || skip "hiding /dev/kvm needs a mount namespace (root)"
    set +e
    unshare -m sh -c "mount -t tmpfs none /dev && '$REWIND' run --root '$ROOT' -- true" >r.out 2>r.err
    RC=$?
    set -e
    expect_rc 120
    expect_grep r.err '/dev/kvm'
}

# tier: vm
test_bad_kernel() {
    echo garbage > bad-vmlinux
    REWIND_KERNEL=$PWD/bad-vmlinux run_rw r run --root "$ROOT" -- true
    expect_rc 122
    expect_grep r.err 'not an'
}
