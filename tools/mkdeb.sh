#!/usr/bin/env bash
# mkdeb.sh VERSION OUT.deb: rewind as a Debian package, with Debian's own
# tools (dpkg-shlibdeps for Depends, dpkg-deb to build; lintian when present).
# `make deb` runs it after building what tools/install.sh installs.
#
# Invariants:
#  1. The package holds exactly tools/install.sh's list under /usr (plus
#     Debian's copyright from debian/copyright, changelog and lintian
#     overrides; less LICENSE, which the copyright names), man pages gzipped.
#  2. rewind-init and the guest kernel are shipped byte for byte as built:
#     their hashes are inputs of every run id, so a run recorded by a build
#     tree replays on the installed package and back.
#  3. Depends are what the binary links (dpkg-shlibdeps), the library serve
#     loads when it starts (libmicrohttpd12: src/serve/mhd.c), and the programs
#     it runs for every run (mkfs.erofs; tar is essential); a program only one command
#     runs is a Recommends (docs/install.md lists which command needs which).
#  4. The package is rebuilt only when the key (the SHA-256 of every file
#     installed, the version and these scripts) changed; $out.key holds it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: tools/mkdeb.sh VERSION OUT.deb" >&2; exit 2; }
version=$1 out=$2
for t in dpkg-deb dpkg-shlibdeps; do
    command -v "$t" >/dev/null || { echo "mkdeb: $t missing (apt-get install dpkg-dev)" >&2; exit 1; }
done
# Built again only when an input changed (make's timestamps cannot say:
# the kernel is copied from its cache on every make).
key=$( (echo "$version"; "$top/tools/install.sh" --list / /usr "$version" | xargs sha256sum;
    sha256sum "$0" "$top/tools/install.sh" "$top/debian/copyright") | sha256sum | cut -c1-64)
if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then exit 0; fi
work=$top/build/deb
rm -rf "$work"
root=$work/root
mkdir -p "$root/DEBIAN" "$work/debian"
"$top/tools/install.sh" "$root" /usr "$version"
doc=$root/usr/share/doc/rewind
# Debian's rules for what goes into a package: man pages gzipped, binaries
# stripped (not rewind-init: invariant 2), no build-id path of this machine.
gzip -9n "$root"/usr/share/man/man1/*.1
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/rewind"
strip --strip-debug "$root"/usr/lib/*/librewind.a
when=$(git -C "$top" log -1 --format=%cD 2>/dev/null || echo "Thu, 01 Jan 2026 00:00:00 +0000")
printf 'rewind (%s) unstable; urgency=medium\n\n  * Built from the rewind source tree (make deb).\n\n -- rewind developers <rewind@example.org>  %s\n' \
    "$version" "$when" | gzip -9n >"$doc/changelog.gz"
# Debian keeps the licence in copyright (debian/copyright, which names
# /usr/share/common-licenses/Apache-2.0), not in a LICENSE of its own.
cp "$top/debian/copyright" "$doc/copyright"
rm "$doc/LICENSE"
# What lintian rightly says of a hypervisor's guest parts (docs/install.md).
mkdir -p "$root/usr/share/lintian/overrides"
cat >"$root/usr/share/lintian/overrides/rewind" <<'EOF'
# rewind-init is PID 1 inside the guest: static on purpose, and shipped as
# built because its hash is an input of every run id.
rewind: statically-linked-binary [usr/lib/rewind/rewind-init]
rewind: unstripped-binary-or-object [usr/lib/rewind/rewind-init]
# The guest kernel, booted by rewind as an ELF (never by this machine).
rewind: statically-linked-binary [usr/lib/rewind/kernel/vmlinux]
rewind: unstripped-binary-or-object [usr/lib/rewind/kernel/vmlinux]
rewind: arch-dependent-file-in-usr-share [usr/share/rewind/examples/pool.erofs]
EOF
cat >"$work/debian/control" <<'EOF'
Source: rewind

Package: rewind
Architecture: amd64
EOF
shlibs=$(cd "$work" && dpkg-shlibdeps -O -e root/usr/bin/rewind 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "mkdeb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: rewind
Version: $version
Architecture: amd64
Maintainer: rewind developers <rewind@example.org>
Installed-Size: $size
Depends: $shlibs, libmicrohttpd12, erofs-utils
Recommends: gdb, nix-bin, slurm-wlm, xz-utils, zstd
Suggests: chromium | www-browser, diffoscope-minimal, python3, golang-go
Section: devel
Priority: optional
Homepage: https://example.org/rewind
Description: deterministic hypervisor: record, replay and explore Linux runs
 rewind runs a Linux command in a one-vCPU KVM virtual machine whose every
 run is a pure function of its inputs: the same root, command, seed and
 epoch give the same output at the same steps. Runs are kept, replayed,
 inspected at any step, forked under other schedules, and checked for
 schedules that change their outcome.
 .
 Needs /dev/kvm (the kvm group) and a guest kernel, which this package ships.
EOF
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
mkdir -p "$(dirname "$out")"
# gzip rather than dpkg-deb's default xz: the package grows from 3.5 to 5.1
# MB, and unpacking its guest kernel takes a fifth of the time (0.17 against
# 0.89 s here, ~20 s against ~4 s under the test host's software CPU, where
# t_install installs it with apt); every dpkg reads it.
dpkg-deb --root-owner-group -Zgzip -z9 --build "$root" "$out.tmp" >/dev/null
mv "$out.tmp" "$out"
echo "$key" >"$out.key"
echo "mkdeb: $out"
