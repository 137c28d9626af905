#!/usr/bin/env bash
# tests/nix/copy-elf.sh PROGRAM BINDIR LIBDIR: copy a dynamically linked
# host program into BINDIR and every shared library it loads (as ldd lists
# them, the loader ld-linux-x86-64.so.2 included) into LIBDIR, each by its
# soname. Used to put GNU coreutils' ls (and patchelf, which the ls
# derivation runs) into the offline test store (tests/nix/setup.sh) and
# into a root of its own (tests/nix/lsroot.sh): docs/nix.md.
set -euo pipefail
prog=$1 bindir=$2 libdir=$3
[ -x "$prog" ] || { echo "copy-elf.sh: $prog missing" >&2; exit 1; }
mkdir -p "$bindir" "$libdir"
cp -L "$prog" "$bindir/"
libs=$(ldd "$prog") || { echo "copy-elf.sh: ldd $prog failed" >&2; exit 1; }
while read -r a b c _; do
    # "libx.so.1 => /lib/.../libx.so.1 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
    if [ "$b" = "=>" ]; then
        case $c in /*) cp -L "$c" "$libdir/$a" ;; esac
    else
        case $a in /*) cp -L "$a" "$libdir/$(basename "$a")" ;; esac
    fi
done <<<"$libs"
[ -e "$libdir/ld-linux-x86-64.so.2" ] || { echo "copy-elf.sh: $prog has no ld-linux-x86-64.so.2 (not an x86-64 glibc program?)" >&2; exit 1; }
chmod u+w "$bindir/$(basename "$prog")" "$libdir"/*
