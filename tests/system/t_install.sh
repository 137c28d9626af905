# t_install: rewind installed like real software (docs/install.md): make
# install's tree, the man pages and completions against --help, the Debian
# package, and a user in the kvm group with no other privilege.

VERSION=$(cat "$TOP/VERSION")
DEB=$TOP/build/rewind_${VERSION}_amd64.deb

# install_to DIR PREFIX: tools/install.sh, as `make install` runs it.
install_to() { "$TOP/tools/install.sh" "$1" "$2" "$VERSION" >/dev/null; }

# hidden_top CMD...: CMD with the source tree hidden (a tmpfs over it in a
# mount namespace of its own): an installed rewind must not need it.
hidden_top() {
    command -v unshare >/dev/null || skip "unshare missing"
    unshare -m sh -c 'mount -t tmpfs none "$0" && exec "$@"' "$TOP" "$@"
}

# tier: engine
test_install_tree_runs_without_the_source_tree() {
    [ "$(id -u)" -eq 0 ] || skip "hiding the source tree needs a mount namespace (root)"
    install_to "$T/d" /usr/local
    local p=$T/d/usr/local f
    for f in bin/rewind lib/rewind/rewind-init lib/rewind/kernel/vmlinux lib/librewind.a \
        include/rewind.h lib/pkgconfig/rewind.pc include/rewind-guest/rewind.h \
        share/pkgconfig/rewind-guest.pc share/gocode/src/rewind.local/sdk/rewind/rewind.go \
        share/man/man1/rewind.1 share/man/man1/rewind-check.1 \
        share/bash-completion/completions/rewind share/zsh/site-functions/_rewind \
        share/rewind/examples/pool.erofs share/doc/rewind/LICENSE; do
        [ -f "$p/$f" ] || fail "not installed: $f"
    done
    ls "$p"/lib/python3*/dist-packages/rewind.py >/dev/null || fail "the Python SDK is not installed"
    cmp "$p/lib/rewind/rewind-init" "$TOP/build/rewind-init" || fail "rewind-init changed on install"
    # The installed program, the source tree hidden: its kernel and init
    # under ../lib/rewind, its version, the first screen.
    cd /
    hidden_top "$p/bin/rewind" doctor --json >"$T/doc.json" || true
    expect_grep "$T/doc.json" '"kernel":true,"init":true,"mkfs_erofs":true'
    hidden_top "$p/bin/rewind" >"$T/first.out"
    expect_grep "$T/first.out" "rewind doctor"
    expect_grep "$T/first.out" "rewind run --root ROOT -- CMD"
    expect_grep "$T/first.out" "rewind check --root ROOT -- CMD"
    expect_grep "$T/first.out" "rewind run --root $p/share/rewind/examples/pool.erofs -- pool"
    hidden_top "$p/bin/rewind" --version >"$T/v.out"
    expect_file "$T/v.out" "rewind $VERSION"
    # A program against the installed header and library, found by pkg-config.
    local flags
    flags=$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --define-variable=prefix="$p" --cflags --libs rewind)
    case $flags in *"-I$p/include"*) ;; *) fail "pkg-config: $flags" ;; esac
    cc -std=c11 -D_GNU_SOURCE -o "$T/director" "$TOP/examples/director/director.c" $flags ||
        fail "examples/director does not build against the installed library"
    # uninstall removes every file install put there
    "$TOP/tools/install.sh" --uninstall "$T/d" /usr/local "$VERSION"
    [ -z "$(find "$T/d" -type f)" ] || fail "left after uninstall: $(find "$T/d" -type f | head -3)"
}

# tier: engine
test_man_pages_and_completions_match_help() {
    type -P python3 >/dev/null || skip "python3 missing"
    install_to "$T/d" /usr
    local p=$T/d/usr bin=$T/d/usr/bin/rewind zdir=$T/d/usr/share/zsh/vendor-completions c
    # Regenerated from the installed binary's --help, they are what was installed.
    python3 "$TOP/tools/mkman.py" "$bin" "$T/g" "$VERSION"
    diff -r "$T/g/man1" "$p/share/man/man1" >"$T/drift" || fail "man pages drift from --help: $(head -c 400 "$T/drift")"
    diff "$T/g/bash/rewind" "$p/share/bash-completion/completions/rewind" >"$T/drift" ||
        fail "bash completion drifts from --help"
    diff "$T/g/zsh/_rewind" "$zdir/_rewind" >"$T/drift" || fail "zsh completion drifts from --help"
    # Every command has its page, every option of its --help is completed.
    "$bin" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1}' >"$T/cmds"
    [ "$(wc -l <"$T/cmds")" -ge 30 ] || fail "few commands in --help: $(wc -l <"$T/cmds")"
    while read -r c; do
        [ -f "$p/share/man/man1/rewind-$c.1" ] || fail "no man page for $c"
        "$bin" "$c" --help >"$T/h"
        local line; line=$(grep "^    $c) " "$p/share/bash-completion/completions/rewind")
        for o in $(grep -oE -- '(^|[ [(|,])--[a-z][a-z0-9-]*' "$T/h" | grep -oE -- '--[a-z0-9-]+' | sort -u); do
            case " $line " in *" $o "* | *"\"$o "* | *" $o\""* | *"\"$o\""*) ;; *) fail "$c: $o not completed" ;; esac
        done
        # the page says what --help says (its first usage line, as man renders it)
        LC_ALL=C groff -man -Tascii -ww -rLL=200n "$p/share/man/man1/rewind-$c.1" 2>"$T/manerr" >"$T/man.txt"
        [ ! -s "$T/manerr" ] || fail "groff warns on rewind-$c.1: $(head -2 "$T/manerr")"
        grep -qF -- "$(head -1 "$T/h" | sed 's/^usage: //' | cut -c1-40)" "$T/man.txt" ||
            fail "man rewind-$c does not show its usage: $(head -1 "$T/h")"
    done <"$T/cmds"
    LC_ALL=C MANWIDTH=80 man -l "$p/share/man/man1/rewind.1" | grep -q 'rewind-check' || fail "man rewind"
    bash -n "$p/share/bash-completion/completions/rewind"
    if command -v zsh >/dev/null; then zsh -n "$zdir/_rewind"; fi
    # bash completes commands, options and run names and ids (from rewind ls).
    mkdir -p "$T/fake"
    printf '#!/bin/sh\necho %s\n' "'[{\"id\":\"0123456789abcdef\",\"name\":\"mine\"}]'" >"$T/fake/rewind"
    chmod +x "$T/fake/rewind"
    mkdir "$T/empty" && cd "$T/empty" # no file to complete but the runs
    PATH=$T/fake:$PATH bash -c '
        source "$1"
        COMP_WORDS=(rewind che); COMP_CWORD=1; _rewind; echo "${COMPREPLY[*]}"
        COMP_WORDS=(rewind check --sch); COMP_CWORD=2; _rewind; echo "${COMPREPLY[*]}"
        COMP_WORDS=(rewind show m); COMP_CWORD=2; _rewind; echo "${COMPREPLY[*]}"
        COMP_WORDS=(rewind show 01); COMP_CWORD=2; _rewind; echo "${COMPREPLY[*]}"
    ' _ "$p/share/bash-completion/completions/rewind" >"$T/comp"
    expect_file "$T/comp" "$(printf 'check checks\n--schedules\nmine\n0123456789abcdef')"
    # zsh: the same, through stand-ins for compadd, _describe and _files
    command -v zsh >/dev/null || skip "zsh missing (tools/deps.sh)"
    PATH=$T/fake:$PATH zsh -f -c '
        compadd() { [[ $1 == -a ]] && print -r -- "${(P)2}" }
        _describe() { print -r -- "${(P)2}" }
        _files() { print files }
        words=(rewind che); CURRENT=2; PREFIX=che; source "$1" | grep -o "checks\?:[a-z]*"
        words=(rewind check --sch); CURRENT=3; PREFIX=--sch; source "$1" | grep -o -- "--schedules"
        words=(rewind show m); CURRENT=3; PREFIX=m; source "$1"
    ' _ "$zdir/_rewind" >"$T/zcomp"
    expect_file "$T/zcomp" "$(printf 'check:try\nchecks:list\n--schedules\n0123456789abcdef mine\nfiles')"
}

# tier: engine
test_deb_has_its_depends_and_the_guest_kernel() {
    command -v dpkg-deb >/dev/null || skip "dpkg-deb missing (apt-get install dpkg-dev)"
    [ -f "$DEB" ] || fail "$DEB missing (make deb; make check builds it)"
    dpkg-deb -f "$DEB" Depends >"$T/dep"
    for d in libc6 libjansson4 libzstd1 libssl3 libdw1 libelf1 libmicrohttpd12 erofs-utils; do
        expect_grep "$T/dep" "$d"
    done
    dpkg-deb -f "$DEB" Recommends >"$T/rec"
    for d in gdb nix-bin slurm-wlm; do expect_grep "$T/rec" "$d"; done
    dpkg-deb -x "$DEB" "$T/x"
    cmp "$T/x/usr/lib/rewind/kernel/vmlinux" "$TOP/build/kernel/vmlinux" || fail "the package's kernel is not the built one"
    cmp "$T/x/usr/lib/rewind/rewind-init" "$TOP/build/rewind-init" || fail "the package's rewind-init is not the built one"
    [ -f "$T/x/usr/share/man/man1/rewind-check.1.gz" ] || fail "no man rewind-check in the package"
    # the licence as Debian keeps it: copyright, naming common-licenses
    cmp "$T/x/usr/share/doc/rewind/copyright" "$TOP/debian/copyright" || fail "the package's copyright is not debian/copyright"
    expect_grep "$T/x/usr/share/doc/rewind/copyright" "/usr/share/common-licenses/Apache-2.0"
    [ ! -e "$T/x/usr/share/doc/rewind/LICENSE" ] || fail "the package ships LICENSE beside its copyright"
    command -v lintian >/dev/null || skip "lintian missing (apt-get install lintian)"
    lintian "$DEB" >"$T/lintian" 2>&1 || true
    grep -v 'root privileges' "$T/lintian" >"$T/lintian.left" || true
    [ ! -s "$T/lintian.left" ] || fail "lintian: $(head -5 "$T/lintian.left")"
}

# tier: engine
test_doctor_says_what_to_do_without_usable_kvm() {
    # Whatever this machine lacks, doctor names what to do about it.
    "$REWIND" doctor >d.out 2>&1 && skip "this machine runs rewind's guests: nothing to advise"
    expect_grep d.out "^verdict: *rewind cannot run guests here"
    if [ ! -e /dev/kvm ]; then
        expect_grep d.out "no /dev/kvm: enable VT-x or AMD-V in the firmware"
        expect_grep d.out "cloud instance type with nested virtualization"
    elif ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
        expect_grep d.out "sudo usermod -aG"
    elif grep -q "NOT NATIVE" d.out; then
        expect_grep d.out "guest kernel code is emulated (a VM without nested virtualization)"
        expect_grep d.out "turn on nested virtualization on its host"
    fi
}

# kvm_user DIR: make DIR a home for uid 65534 (nobody), give /dev/kvm to
# the kvm group as Debian's udev does (root:kvm 0660), and set AS_KVM_USER
# to the command prefix that runs a program as that user in the kvm group
# alone, with no capability (then `env HOME=... PROGRAM ARGS`).
kvm_user() {
    command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
    [ "$(id -u)" -eq 0 ] || skip "making an unprivileged user needs root"
    local kvm d; kvm=$(getent group kvm | cut -d: -f3)
    [ -n "$kvm" ] || skip "no kvm group"
    chgrp kvm /dev/kvm && chmod 0660 /dev/kvm
    mkdir -p "$1"
    chown 65534:65534 "$1"
    # run.sh's scratch folders are root's 0700 (mktemp): let the user through
    for d in "$T" "${T%/*}" "${T%/*/*}"; do chmod o+x "$d"; done
    AS_KVM_USER=(setpriv --reuid=65534 --regid=65534 --groups="$kvm" --inh-caps=-all --bounding-set=-all)
}

# The steps inside the fresh Debian root (test_deb_in_a_fresh_debian_root),
# run by bash as root in the chroot: apt installs the package, udev's work
# is done by hand (/dev/kvm root:kvm 0660: the root has no udev running),
# then a user of the kvm group runs rewind from a login shell. Each step's
# output is in /out/STEP.out (its start, in the host's uptime, in
# /out/times); a failed step ends the script with its name.
FRESH_STEPS='
set -u
step() {
    local n=$1 t0; shift
    read -r t0 _ </proc/uptime
    "$@" >"/out/$n.out" 2>&1 || { echo "step $n failed: $(tail -n 5 "/out/$n.out")" >&2; exit 1; }
    echo "$n $t0" >>/out/times
}
as_user() { runuser -l user -c "$*"; }
export DEBIAN_FRONTEND=noninteractive
step apt apt install -y --no-install-recommends "/tmp/$DEB"
step user useradd --create-home --groups kvm --shell /bin/bash user
step kvm sh -c "mknod -m 0660 /dev/kvm c 10 232 && chgrp kvm /dev/kvm"
step doctor as_user rewind doctor
step run as_user "cd && cp -r /srv/root root && rewind run --root root -- sh -c \"echo hello from a fresh root\""
step check as_user rewind check --schedules 2 -j 1 --root /usr/share/rewind/examples/pool.erofs -- pool-fixed
step man as_user "MANWIDTH=80 man rewind"
step owner find /home/user ! -user user
'

# tier: vm
test_deb_in_a_fresh_debian_root() {
    [ -f "$DEB" ] || fail "$DEB missing (make deb; make check builds it)"
    [ "$(id -u)" -eq 0 ] || skip "a chroot and an overlay mount need root"
    local lower
    lower=$(readlink -f "$TOP/build/roots/fresh-debian") && [ -f "$lower/.fresh-depends" ] ||
        skip "no fresh Debian root (tools/mkroot-fresh.sh, which make check runs as root)"
    [ "$(cat "$lower/.fresh-depends")" = "$(dpkg-deb -f "$DEB" Depends)" ] ||
        fail "the fresh root was made for other Depends: run make fresh-root (make check does)"
    # The cached root stays as built: the test writes to an overlay on it
    # (tools/mkroot-fresh.sh, invariant 3), in a mount namespace of its own,
    # so nothing is left mounted whatever happens.
    local m=$T/m up=$T/up
    mkdir -p "$m" "$up/tmp" "$up/out" "$up/srv" "$T/work"
    cp "$DEB" "$up/tmp/"
    small_root "$up/srv/root"
    unshare -m sh -c 'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" &&
        mount -t proc proc "$4/proc" && mount -t sysfs sysfs "$4/sys" &&
        exec chroot "$4" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
            DEB="$5" /bin/bash -c "$6"' \
        sh "$lower" "$up" "$T/work" "$m" "${DEB##*/}" "$FRESH_STEPS" 2>"$T/fresh.err" ||
        fail "in the fresh Debian root: $(tail -n 8 "$T/fresh.err")"
    local o=$up/out
    # apt resolved the Depends the root lacked (the .debs tools/mkroot-fresh.sh fetched)
    expect_grep "$o/apt.out" "Setting up erofs-utils"
    expect_grep "$o/apt.out" "Setting up rewind ($(cat "$TOP/VERSION"))"
    expect_grep "$o/doctor.out" "kernel: *ok (/usr/lib/rewind/kernel/vmlinux)"
    expect_grep "$o/doctor.out" "^verdict: *rewind can run guests here"
    expect_grep "$o/run.out" "hello from a fresh root"
    run_id "$o/run.out" >/dev/null
    expect_grep "$o/man.out" "rewind-check"
    [ ! -s "$o/owner.out" ] || fail "files in the user's home not the user's: $(head -3 "$o/owner.out")"
}

# tier: long
test_a_kvm_group_user_runs_the_demo_a_check_and_an_archive() {
    local u=$T/user
    kvm_user "$u"
    # What `make install DESTDIR=$T/inst` installs, run with the source
    # and build tree hidden (hidden_top).
    install_to "$T/inst" /usr/local
    local rw=$T/inst/usr/local/bin/rewind
    small_root "$u/root" pool-fixed
    chown -R 65534:65534 "$u/root"
    # Not in the group: doctor says the one line that needs root.
    hidden_top setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all env HOME="$u" \
        "$rw" doctor >nogroup.out 2>&1 && fail "doctor passed without the kvm group"
    expect_grep nogroup.out "permission denied opening /dev/kvm: join its group once, as root (sudo usermod -aG kvm \$USER)"
    # and run says the same one line, exit 120 (no usable /dev/kvm)
    local rc=0
    hidden_top setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all env HOME="$u" REWIND_HOME="$u/home0" \
        "$rw" run --root "$u/root" -- true >nogroup-run.out 2>&1 || rc=$?
    [ "$rc" -eq 120 ] || fail "run without the kvm group: exit $rc, expected 120"
    expect_grep nogroup-run.out "^rewind: permission denied opening /dev/kvm: join its group once, as root (sudo usermod"
    as_user() { # as_user HOME-NAME ARGS...: the installed rewind as the user with REWIND_HOME=$u/HOME-NAME
        local h=$1; shift
        hidden_top "${AS_KVM_USER[@]}" env HOME="$u" REWIND_HOME="$u/$h" "$rw" "$@"
    }
    cd "$u"
    # the demo (tools/demo.sh) from a directory root: the user's image
    local cmd='echo "hello from rewind"; date; sleep 3; date; od -An -N4 -tu4 /dev/urandom'
    as_user home run --root "$u/root" -- sh -c "$cmd" >"$T/d1.out" 2>"$T/d1.err" || fail "demo run 1: $(tail -3 "$T/d1.err")"
    as_user home run --root "$u/root" -- sh -c "$cmd" >"$T/d2.out" 2>"$T/d2.err" || fail "demo run 2: $(tail -3 "$T/d2.err")"
    same_run "$T/d1.err" "$T/d2.err"
    cmp "$T/d1.out" "$T/d2.out" || fail "the demo's two runs printed different things"
    as_user home check --schedules 3 -j 1 --root "$u/root" -- /usr/bin/pool-fixed >"$T/c.out" 2>"$T/c.err" ||
        fail "check: $(tail -3 "$T/c.err")"
    local id; id=$(run_id "$T/d1.err")
    as_user home export "$id" --replayable -o "$u/d.rewind" >"$T/x.out" 2>"$T/x.err" || fail "export: $(tail -2 "$T/x.err")"
    as_user h2 import "$u/d.rewind" >"$T/i.out" 2>"$T/i.err" || fail "import: $(tail -2 "$T/i.err")"
    as_user h2 replay "$id" >"$T/r.out" 2>"$T/r.err" || fail "replay of the import: $(tail -2 "$T/r.err")"
    # everything rewind wrote is the user's
    [ -z "$(find "$u" ! -uid 65534 | head -1)" ] || fail "files not the user's: $(find "$u" ! -uid 65534 | head -3)"
}

# The commands beyond the first ones, as the same user: cat, where and gdb on
# a paused machine, serve over HTTP (the longer variant, in check-long).
# tier: long
test_a_kvm_group_user_inspects_debugs_and_serves() {
    local u=$T/user
    kvm_user "$u"
    command -v curl >/dev/null || skip "no curl"
    local rw=("${AS_KVM_USER[@]}" env HOME="$u" REWIND_HOME="$u/home" "$REWIND")
    cd "$u"
    "${rw[@]}" run --root "$ROOT" -- sh -c 'echo kept > /tmp/f; /usr/bin/dbg_threads' >"$T/a.out" 2>"$T/a.err" ||
        fail "run: $(tail -3 "$T/a.err")"
    local id s; id=$(run_id "$T/a.err")
    s=$("${rw[@]}" events "$id" --kind output --json | python3 -c '
import json, sys
print([e["step"] for e in json.load(sys.stdin) if "ready" in e["payload"]][0])')
    s=$((s + 5))
    "${rw[@]}" cat "$id" "$s" /tmp/f >"$T/c.out" 2>"$T/c.err" || fail "cat: $(tail -2 "$T/c.err")"
    expect_file "$T/c.out" kept
    "${rw[@]}" where "$id" "$s" >"$T/w.out" 2>"$T/w.err" || fail "where: $(tail -2 "$T/w.err")"
    expect_grep "$T/w.out" wait_main
    if command -v gdb >/dev/null; then
        timeout -k 5 400 "${rw[@]}" gdb "$id" "$s" -- -batch -ex 'info threads' >"$T/g.out" 2>"$T/g.err" ||
            fail "gdb: $(tail -3 "$T/g.err")"
        expect_grep "$T/g.out" "Thread"
    fi
    "${rw[@]}" serve >"$T/s.out" 2>"$T/s.err" &
    local spid=$! url="" i
    for i in $(seq 100); do url=$(head -n 1 "$T/s.out" 2>/dev/null); [ -n "$url" ] && break; sleep 0.1; done
    [ -n "$url" ] || { kill "$spid"; fail "serve printed no URL: $(cat "$T/s.err")"; }
    local code; code=$(curl -s -o "$T/runs.json" -w '%{http_code}' "${url}api/runs")
    kill "$spid"; wait "$spid" 2>/dev/null || true
    [ "$code" = 200 ] || fail "serve's api/runs: $code"
    expect_grep "$T/runs.json" "$id"
    [ -z "$(find "$u" ! -uid 65534 | head -1)" ] || fail "files not the user's: $(find "$u" ! -uid 65534 | head -3)"
}
