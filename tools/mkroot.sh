#!/usr/bin/env bash
# mkroot.sh OUT [STATIC-PROGRAM...]: a small root filesystem for examples and
# tests: busybox-static with its applets as symlinks, a passwd/group, and the
# given static programs copied into /usr/bin. Rebuilt in a temp dir and moved
# into place, so OUT is never half-written.
set -euo pipefail
out=$1; shift
bb=/bin/busybox
[ -x "$bb" ] || { echo "mkroot: $bb missing (apt-get install busybox-static)" >&2; exit 1; }
tmp=$(mktemp -d "${out%/}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,dev,proc,sys,var/tmp}
cp "$bb" "$tmp/bin/busybox"
for a in $("$bb" --list-full); do
    [ "$a" = bin/busybox ] && continue
    mkdir -p "$tmp/$(dirname "$a")"
    ln -sf /bin/busybox "$tmp/$a"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$tmp/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$tmp/etc/group"
echo rewind > "$tmp/etc/hostname"
for p in "$@"; do cp "$p" "$tmp/usr/bin/"; done
chmod 1777 "$tmp/tmp" "$tmp/var/tmp"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
