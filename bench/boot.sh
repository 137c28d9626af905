#!/usr/bin/env bash
# bench/boot.sh [N]: boot to the exit of /bin/true, N times (default 5):
#   rewind:  `rewind run --root build/roots/test -- /bin/true` (steps, wall)
#   qemu:    the same vmlinux under `qemu-system-x86_64 -M microvm -accel kvm`
#            with an initramfs whose /init runs /bin/true and reboots (wall)
# side by side in one run on the same machine; run it inside tools/kvm-host
# where KVM is not native: tools/kvm-host -- bench/boot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
K=${REWIND_KERNEL:-build/kernel/vmlinux}
export REWIND_HOME=${REWIND_HOME:-$(mktemp -d)}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The QEMU side: an initramfs with a static init that runs /bin/true.
cat > "$tmp/init.c" <<'C'
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    pid_t p = fork();
    if (p == 0) { char *a[] = {"/bin/true", 0}; execv(a[0], a); _exit(127); }
    int st; waitpid(p, &st, 0);
    reboot(RB_AUTOBOOT);
    return 0;
}
C
cc -O2 -static -o "$tmp/init" "$tmp/init.c"
mkdir -p "$tmp/rd/bin"; cp "$tmp/init" "$tmp/rd/init"; cp /bin/true "$tmp/rd/bin/true" 2>/dev/null || cp build/roots/test/bin/busybox "$tmp/rd/bin/true"
(cd "$tmp/rd" && find . | cpio -o -H newc --quiet > "$tmp/rd.cpio")

ms() { date +%s%N; }
rw_wall=(); rw_steps=(); q_wall=()
for i in $(seq 1 "$N"); do
    build/rewind run --root build/roots/test.erofs -- /bin/true 2> "$tmp/rw.err"
    rw_steps+=("$(sed -n 's/.* after \([0-9]*\) steps.*/\1/p' "$tmp/rw.err")")
    rw_wall+=("$(sed -n 's/.*virtual, \([0-9.]*\)s wall.*/\1/p' "$tmp/rw.err")")
    s0=$(ms)
    build/rewind run --root build/roots/test.erofs -- /bin/true 2>/dev/null
    rw_total=$(( ($(ms) - s0) / 1000000 ))
    t0=$(ms)
    timeout 60 qemu-system-x86_64 -M microvm -accel kvm -cpu host -m 512 -smp 1 -nographic \
        -no-reboot -kernel "$K" -initrd "$tmp/rd.cpio" \
        -append "console=ttyS0 reboot=t lpj=1000000 panic=-1 quiet" >"$tmp/qemu.log" 2>&1 || true
    q_wall+=("$(( ($(ms) - t0) / 1000000 ))")
    [ "$i" -gt 1 ] || { echo "qemu said:"; tail -n 5 "$tmp/qemu.log"; }
    echo "round $i: rewind ${rw_steps[-1]} steps, VM ${rw_wall[-1]}s, process ${rw_total} ms; qemu microvm process ${q_wall[-1]} ms"
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
echo "median: rewind $(med "${rw_steps[@]}") steps, $(med "${rw_wall[@]}") s in the VM loop; qemu microvm $(med "${q_wall[@]}") ms"
