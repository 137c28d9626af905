#!/usr/bin/env bash
# bench/boot.sh [N]: boot to the exit of /bin/true, N times (default 5):
#   rewind:  `rewind run --root build/roots/test.erofs -- /bin/true` (steps; wall of
#            the VM loop and of the whole process)
#   qemu:    the same vmlinux (PVH entry) under `qemu-system-x86_64 -M microvm
#            -accel kvm` with an initramfs whose /init runs /bin/true and then
#            exits QEMU through isa-debug-exit (status 33 proves it got there)
# side by side in one run on the same machine. Where KVM is not native, run
# it inside the test host: tools/kvm-host -- bench/boot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
K=${REWIND_KERNEL:-build/kernel/vmlinux}
export REWIND_HOME=${REWIND_HOME:-$(mktemp -d)}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/init.c" <<'C'
#include <sys/io.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    pid_t p = fork();
    if (p == 0) { char *a[] = {"/bin/true", 0}; execv(a[0], a); _exit(127); }
    int st; waitpid(p, &st, 0);
    /* isa-debug-exit: QEMU exits with status (0x10 << 1) | 1 = 33 */
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && ioperm(0xf4, 1, 1) == 0) outb(0x10, 0xf4);
    reboot(RB_AUTOBOOT);
    return 0;
}
C
cc -O2 -static -o "$tmp/init" "$tmp/init.c"
mkdir -p "$tmp/rd/bin"; cp "$tmp/init" "$tmp/rd/init"; cp build/roots/test/bin/busybox "$tmp/rd/bin/busybox"
ln -s busybox "$tmp/rd/bin/true"
(cd "$tmp/rd" && find . | cpio -o -H newc --quiet > "$tmp/rd.cpio")

ms() { date +%s%N; }
rw_loop=(); rw_steps=(); rw_proc=(); q_wall=(); q_ok=0
for i in $(seq 1 "$N"); do
    s0=$(ms)
    build/rewind run --root build/roots/test.erofs -- /bin/true 2> "$tmp/rw.err"
    rw_proc+=("$(( ($(ms) - s0) / 1000000 ))")
    rw_steps+=("$(sed -n 's/.* after \([0-9]*\) steps.*/\1/p' "$tmp/rw.err")")
    rw_loop+=("$(sed -n 's/.*virtual, \([0-9.]*\)s wall.*/\1/p' "$tmp/rw.err")")
    t0=$(ms); qrc=0
    timeout 120 qemu-system-x86_64 -M microvm -accel kvm -cpu host -m 512 -smp 1 -nographic \
        -no-reboot -kernel "$K" -initrd "$tmp/rd.cpio" \
        -device isa-debug-exit,iobase=0xf4,iosize=1 \
        -append "reboot=t lpj=1000000 panic=-1 quiet" >"$tmp/qemu.log" 2>&1 || qrc=$?
    q_wall+=("$(( ($(ms) - t0) / 1000000 ))")
    if [ "$qrc" -eq 33 ]; then q_ok=$((q_ok + 1)); qs="reached /bin/true's exit"
    else qs="did NOT reach /bin/true's exit (status $qrc: $(tail -n 1 "$tmp/qemu.log"))"; fi
    echo "round $i: rewind ${rw_steps[-1]} steps, VM loop ${rw_loop[-1]} s, process ${rw_proc[-1]} ms;" \
         "qemu microvm process ${q_wall[-1]} ms, $qs"
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
echo "median: rewind $(med "${rw_steps[@]}") steps, VM loop $(med "${rw_loop[@]}") s, process $(med "${rw_proc[@]}") ms;" \
     "qemu microvm process $(med "${q_wall[@]}") ms ($q_ok of $N rounds reached the exit)"
awk -v r="$(med "${rw_proc[@]}")" -v q="$(med "${q_wall[@]}")" 'BEGIN{printf "ratio rewind/qemu (whole process): %.2f\n", r/q}'
