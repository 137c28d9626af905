#!/usr/bin/env bash
# install.sh [--uninstall | --list] DESTDIR PREFIX VERSION: put an installed rewind
# under DESTDIR/PREFIX from build/ (what `make install` and `make deb` run;
# docs/install.md has the layout and why each file goes where it does).
#
# Invariants:
#  1. One list (files, below) says what is installed: install copies it,
#     uninstall removes exactly it, so the two cannot disagree.
#  2. Nothing installed refers to the source tree: rewind finds its kernel
#     and rewind-init at ../lib/rewind from its bin/ (src/run/api.c), the
#     man pages and completions are generated files (tools/mkman.py).
#  3. Only what `make` built is installed: a missing build product stops the
#     install before anything is copied.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
uninstall=0 list=0
if [ "${1:-}" = --uninstall ]; then uninstall=1; shift; fi
if [ "${1:-}" = --list ]; then list=1; shift; fi
[ $# -eq 3 ] || { echo "usage: tools/install.sh [--uninstall | --list] DESTDIR PREFIX VERSION" >&2; exit 2; }
destdir=$1 prefix=$2 version=$3
case $prefix in /*) ;; *) echo "install: PREFIX must be absolute: $prefix" >&2; exit 2 ;; esac
B=$top/build
# Where each ecosystem looks (Debian's layout; docs/install.md).
if [ "$prefix" = /usr ]; then
    pydir=$prefix/lib/python3/dist-packages zshdir=$prefix/share/zsh/vendor-completions
    libdir=$prefix/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
else
    libdir=$prefix/lib
    # python3's X.Y from the name its link points to (Debian: python3.11),
    # else from python3 itself (its start took 12 s in the test host)
    pyver=$(readlink -f "$(command -v python3 || echo none)" || true)
    pyver=${pyver##*/python}
    case $pyver in
    [0-9]*.[0-9]*) ;;
    *) pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3) ;;
    esac
    pydir=$prefix/lib/python$pyver/dist-packages zshdir=$prefix/share/zsh/site-functions
fi
pydir=${REWIND_PYTHONDIR:-$pydir}

# files: MODE SOURCE TARGET (TARGET under PREFIX), one a line.
files() {
    local p=$prefix
    echo "755 $B/rewind $p/bin/rewind"
    echo "755 $B/rewind-init $p/lib/rewind/rewind-init"
    echo "644 $B/kernel/vmlinux $p/lib/rewind/kernel/vmlinux"
    echo "644 $B/librewind.a $libdir/librewind.a"
    echo "644 $top/include/rewind.h $p/include/rewind.h"
    echo "644 $top/include/rewind_check.h $p/include/rewind_check.h"
    echo "644 $B/install/rewind.pc $libdir/pkgconfig/rewind.pc"
    echo "644 $top/guest/sdk/rewind.h $p/include/rewind-guest/rewind.h"
    echo "644 $B/install/rewind-guest.pc $p/share/pkgconfig/rewind-guest.pc"
    echo "644 $top/guest/sdk/python/rewind.py $pydir/rewind.py"
    echo "644 $top/guest/sdk/go/go.mod $p/share/gocode/src/rewind.local/sdk/go.mod"
    echo "644 $top/guest/sdk/go/rewind/rewind.go $p/share/gocode/src/rewind.local/sdk/rewind/rewind.go"
    local m
    for m in "$B"/man/man1/*.1; do echo "644 $m $p/share/man/man1/${m##*/}"; done
    echo "644 $B/man/bash/rewind $p/share/bash-completion/completions/rewind"
    echo "644 $B/man/zsh/_rewind $zshdir/_rewind"
    echo "644 $B/examples/pool.erofs $p/share/rewind/examples/pool.erofs"
    echo "644 $top/examples/pool/pool.c $p/share/rewind/examples/pool.c"
    echo "644 $top/README.md $p/share/doc/rewind/README.md"
    echo "644 $top/LICENSE $p/share/doc/rewind/LICENSE"
}

if ((list)); then # the sources, for tools/mkdeb.sh's key
    files | awk '{print $2}' | grep -v "^$B/install/"
    exit 0
fi
if ((uninstall)); then
    files | while read -r _ _ dst; do rm -f "$destdir$dst"; done
    # The folders that are rewind's alone; shared ones (bin, man1) stay.
    for d in lib/rewind/kernel lib/rewind include/rewind-guest share/gocode/src/rewind.local/sdk/rewind \
        share/gocode/src/rewind.local/sdk share/gocode/src/rewind.local share/rewind/examples \
        share/rewind share/doc/rewind; do
        rmdir "$destdir$prefix/$d" 2>/dev/null || true
    done
    exit 0
fi

mkdir -p "$B/install"
libs="-lcrypto -ljansson -lzstd -ldw -lelf -pthread -lm"
cat >"$B/install/rewind.pc" <<EOF
prefix=$prefix
libdir=\${prefix}${libdir#"$prefix"}
includedir=\${prefix}/include

Name: rewind
Description: the engine of rewind, a deterministic hypervisor (include/rewind.h)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lrewind $libs
EOF
cat >"$B/install/rewind-guest.pc" <<EOF
prefix=$prefix
includedir=\${prefix}/include/rewind-guest

Name: rewind-guest
Description: rewind's guest SDK for C: assertions a program inside a run makes (docs/sdk.md)
Version: $version
Cflags: -I\${includedir}
EOF
[ -e "$B/man/man1/rewind.1" ] || { echo "install: $B/man missing (make install builds it)" >&2; exit 1; }
files | while read -r _ src _; do
    [ -e "$src" ] || { echo "install: $src missing (run make install, not this script alone)" >&2; exit 1; }
done
# One install per mode and folder for the files that keep their name (~10
# processes, not one a file: under the test host's software CPU each costs
# ~0.2 s, and t_install installs a tree there). A pipe, not <(...): the
# test host's /dev has no /dev/fd.
files | {
    declare -A group=()
    while read -r mode src dst; do
        if [ "${src##*/}" = "${dst##*/}" ]; then
            group["$mode ${dst%/*}"]+="$src"$'\n'
        else
            install -D -m "$mode" "$src" "$destdir$dst"
        fi
    done
    for k in "${!group[@]}"; do
        mapfile -t srcs <<<"${group[$k]%$'\n'}"
        install -d "$destdir${k#* }"
        install -m "${k%% *}" -t "$destdir${k#* }" "${srcs[@]}"
    done
}
