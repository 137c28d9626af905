#!/usr/bin/env bash
# mkroot-python.sh OUT.erofs BASE-DIR: the test root (BASE-DIR, made by
# tools/mkroot.sh) plus this machine's Debian python3 (the interpreter, the
# shared libraries it and its extension modules load, and its standard
# library without the parts no test imports: tests, IDLE, tkinter, lib2to3,
# ensurepip, distutils, the build config), as an erofs image. For t_sdk's
# Python test: a root of ~25 MiB instead of the compatibility suite's Debian
# root (mmdebstrap, network). Written to a temp file and renamed, so OUT is
# never half-written.
set -euo pipefail
die() { echo "mkroot-python: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: tools/mkroot-python.sh OUT.erofs BASE-DIR"
out=$1 base=$2
[ -d "$base" ] || die "no base root $base (make build/roots/test.stamp)"
py=$(readlink -f /usr/bin/python3 || true) # Debian's, not a pyenv shim on PATH
[ -x "$py" ] || die "/usr/bin/python3 missing (apt-get install python3)"
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
lib=/usr/lib/python$ver
[ -d "$lib" ] || die "no standard library at $lib"
command -v mkfs.erofs >/dev/null || die "mkfs.erofs missing (apt-get install erofs-utils)"

tmp=$(mktemp -d "${out%.erofs}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -a "$base/." "$tmp/"
mkdir -p "$tmp/usr/bin" "$tmp/usr/lib"
cp "$py" "$tmp/usr/bin/python$ver"
ln -sf "python$ver" "$tmp/usr/bin/python3"
tar -C / -cf - --exclude='__pycache__' \
    --exclude="${lib#/}/test" --exclude="${lib#/}/idlelib" --exclude="${lib#/}/tkinter" \
    --exclude="${lib#/}/turtledemo" --exclude="${lib#/}/lib2to3" --exclude="${lib#/}/ensurepip" \
    --exclude="${lib#/}/distutils" --exclude="${lib#/}/config-$ver-*" --exclude="${lib#/}/site-packages" \
    --exclude="${lib#/}/dist-packages" "${lib#/}" | tar -C "$tmp" -xf -
# Every shared library the interpreter and its extension modules load,
# with the dynamic loader, at the paths they have here.
libs=$( { ldd "$py"; for so in "$lib"/lib-dynload/*.so; do ldd "$so" 2>/dev/null || true; done; } |
    sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | sort -u)
for l in $libs; do
    mkdir -p "$tmp$(dirname "$l")"
    cp -L "$l" "$tmp$l"
done
chroot "$tmp" /usr/bin/python3 -c 'import ast, os, sys, random' 2>/dev/null ||
    [ "$(id -u)" != 0 ] || die "the root's python3 does not start (chroot test)"
mkfs.erofs --quiet -T0 --all-root -U 72657769-6e64-4572-6f66-730000000003 "$out.tmp" "$tmp"
mv "$out.tmp" "$out"
echo "mkroot-python: $out ($(du -sh "$tmp" | cut -f1) tree, python $ver)"
