#!/usr/bin/env bash
# mkroot-debian.sh OUT.erofs [PACKAGES-FILE] [LAYER-DIR]: a Debian bookworm root
# built with mmdebstrap from the package list (default
# tests/compat/packages.txt), plus LAYER-DIR (default tests/compat) copied to
# /compat, as a reproducible erofs image. No manual step; needs network to
# the Debian mirror on the first build only.
#
# Invariants:
#  1. The Debian base (mmdebstrap's tarball) is cached under
#     ~/.cache/rewind/roots/debian-<key>.tar, key = SHA-256 of the base
#     recipe (mmdebstrap's options: package list, suite, mirror, hooks) and
#     SOURCE_DATE_EPOCH: an unchanged list is never fetched again. The versions it got are written beside it
#     (debian-<key>.versions).
#  2. The base is built with a fixed SOURCE_DATE_EPOCH, suite and mirror, so
#     mmdebstrap writes the same tarball for the same package versions.
#  3. The layer (workload sources, Go binaries built with the root's own Go
#     toolchain, which the image then leaves out; Python bytecode in unchecked-hash mode: the image's mtimes
#     are 0) is rebuilt from the cached base whenever the layer changes.
#  4. The image uses the Makefile's mkfs.erofs flags (-T0 --all-root, fixed
#     uuid): the same tree gives the same bytes. OUT is written to a temp name
#     and renamed, so it is never half-written.
#  5. The image itself is cached beside the base as compat-<ikey>.erofs, ikey
#     = SHA-256 of the base's key, this script and the layer's files (paths
#     and contents): an unchanged suite in a fresh clone (CI) copies it
#     instead of building it again. Only the newest one is kept.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$1
pkgfile=${2:-$top/tests/compat/packages.txt}
layer=${3:-$top/tests/compat}
suite=bookworm
mirror=${REWIND_DEBIAN_MIRROR:-http://deb.debian.org/debian}
export SOURCE_DATE_EPOCH=1700000000
cache=${XDG_CACHE_HOME:-$HOME/.cache}/rewind/roots
for t in mmdebstrap mkfs.erofs tar unshare chroot; do
    command -v "$t" >/dev/null || { echo "mkroot-debian: $t missing (tools/deps.sh)" >&2; exit 1; }
done
pkgs=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$pkgfile" | grep -v '^$' | paste -sd, -)
[ -n "$pkgs" ] || { echo "mkroot-debian: no packages in $pkgfile" >&2; exit 1; }
# The base recipe: everything that shapes mmdebstrap's tarball (invariant 1).
mmopts=(--quiet --variant=essential --mode=auto --format=tar --include="$pkgs"
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
    --dpkgopt='path-exclude=/usr/share/locale/*'
    --customize-hook='chroot "$1" dpkg-query -W -f "\${Package} \${Version}\n" >"$1/.versions"'
    --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*'
    "$suite" - "$mirror")
key=$(printf '%s\n' "mkroot-debian base v1" "$SOURCE_DATE_EPOCH" "${mmopts[@]}" | sha256sum | cut -c1-16)
base=$cache/debian-$key.tar
mkdir -p "$cache"
ikey=$({
    echo "$key keep-go=${REWIND_COMPAT_KEEP_GO:-0}"
    sha256sum <"$0"
    (cd "$layer" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
} | sha256sum | cut -c1-16)
img=$cache/compat-$ikey.erofs
if [ -s "$img" ]; then # invariant 5
    cp "$img" "$out.tmp.$$"
    mv "$out.tmp.$$" "$out"
    echo "mkroot-debian: $out is the cached $img" >&2
    exit 0
fi
if [ ! -s "$base" ]; then
    echo "mkroot-debian: building the Debian base $base ($suite: $pkgs)" >&2
    mmdebstrap "${mmopts[@]}" >"$base.tmp.$$"
    tar -xOf "$base.tmp.$$" ./.versions >"$cache/debian-$key.versions"
    mv "$base.tmp.$$" "$base"
fi
tmp=$(mktemp -d "${out%.erofs}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd)
root=$tmp/root
mkdir "$root"
tar -C "$root" --exclude='./dev/*' -xf "$base"
rm -f "$root/.versions"
# The layer: workload sources under /compat.
mkdir -p "$root/compat"
cp -r "$layer"/. "$root/compat/"
# in_root CMD: CMD chrooted into the root with the host's /dev, in a mount
# namespace of its own (unshare -r first when not root), so every path a
# build sees is the root's own and the same from one build to the next.
in_root() {
    local pre=(unshare -m)
    [ "$(id -u)" = 0 ] || pre=(unshare -r -m)
    "${pre[@]}" sh -c 'mount --rbind /dev "$0/dev" && exec chroot "$0" "$@"' "$root" \
        env -i PATH=/usr/bin:/bin HOME=/tmp LC_ALL=C.UTF-8 "$@"
}
# Go programs, built once with the root's own toolchain (pure Go, static).
goroot=$(echo "$root"/usr/lib/go-1.*)
if [ -d "$root/compat/go" ]; then
    mkdir -p "$root/compat/go/bin"
    for d in "$root"/compat/go/*/; do
        [ -f "$d/main.go" ] || continue
        n=$(basename "$d")
        in_root sh -c "cd /compat/go/$n && CGO_ENABLED=0 GO111MODULE=on GOFLAGS=-mod=mod GOPROXY=off \
            GOCACHE=/tmp/gocache GOPATH=/tmp/gopath go build -trimpath -ldflags=-buildid= -o /compat/go/bin/$n ."
    done
    rm -rf "$root/tmp/gocache" "$root/tmp/gopath"
fi
# The Go toolchain (470 MB) only builds the binaries above: the image leaves
# it out unless REWIND_COMPAT_KEEP_GO=1 (runs never compile Go).
[ "${REWIND_COMPAT_KEEP_GO:-0}" = 1 ] || rm -rf "$goroot" "$root"/usr/share/go-1.*
# Bytecode valid whatever the mtimes (the image has mtime 0 everywhere).
if [ -x "$root/usr/bin/python3" ]; then
    in_root python3 -m compileall -q -j0 --invalidation-mode unchecked-hash \
        /usr/lib/python3.11 /compat >/dev/null 2>&1 || true
fi
chmod -R go-w "$root/compat"
mkfs.erofs --quiet -T0 --all-root -U 72657769-6e64-4572-6f66-730000000002 "$tmp/img" "$root"
rm -f "$cache"/compat-*.erofs
cp "$tmp/img" "$img.tmp.$$"
mv "$img.tmp.$$" "$img"
mv "$tmp/img" "$out"
