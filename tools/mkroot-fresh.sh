#!/usr/bin/env bash
# mkroot-fresh.sh DEB LINK: a fresh Debian 12 (bookworm) system as a
# directory, for t_install's test of `apt install ./rewind_*.deb`
# (docs/install.md, "Tests"); LINK (build/roots/fresh-debian) is made a
# symbolic link to it. No manual step; needs root and, on the first build
# only, the Debian mirror.
#
# Invariants:
#  1. The root is what debootstrap installs by default (mmdebstrap's
#     variant important: Priority required and important, with udev, which
#     makes the kvm group) plus man-db (Debian's "standard system
#     utilities", for `man rewind`). Nothing of rewind's Depends is installed
#     unless that set already holds it: apt resolves them in the test.
#  2. The .debs that `apt install --no-install-recommends DEB` needs beyond
#     that set are resolved here by apt against the whole of bookworm (a
#     Depends Debian cannot meet fails this build) and downloaded into a
#     local repository in the root, /var/local/rewind-depends (Packages by
#     dpkg-scanpackages, listed in /etc/apt/sources.list.d). apt's lists
#     then hold that repository alone: in the test (the test host has no
#     network) apt resolves the Depends again, offline, over the installed
#     set and those .debs, without solving over all of Debian's ~60,000
#     packages under the test host's software CPU (~10 s there).
#  3. The root is cached as ${REWIND_CACHE:-~/.cache/rewind}/roots/fresh-<key>,
#     key = SHA-256 of its recipe (mmdebstrap's options with the hook below,
#     mirror) and of DEB's Depends line: a new build of the package with the
#     same Depends uses the same root, a changed Depends line builds a new
#     one. Only the newest is kept. It is written under a temporary name and
#     renamed, so it is never half-built; the test never writes to it (it
#     mounts an overlay on top).
#  4. Not root: no root is built (mmdebstrap's directory output keeps the
#     files' owners only as root), LINK is removed and the test skips.
#  5. man-db's index update on install is off (debconf man-db/auto-update
#     false): its trigger took ~10 s of the test under the software CPU;
#     `man rewind` finds the page by its path without the index.
set -euo pipefail
die() { echo "mkroot-fresh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: tools/mkroot-fresh.sh DEB LINK"
deb=$(realpath -e "$1") || die "no package $1 (make deb)"
link=$2
if [ "$(id -u)" -ne 0 ]; then # invariant 4
    rm -f "$link"
    echo "mkroot-fresh: not root: no fresh Debian root (t_install's test of apt install will skip)" >&2
    exit 0
fi
for t in mmdebstrap dpkg-deb dpkg-scanpackages; do
    command -v "$t" >/dev/null || die "$t missing (tools/deps.sh)"
done
suite=bookworm
mirror=${REWIND_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${REWIND_CACHE:-$HOME/.cache/rewind}/roots
depends=$(dpkg-deb -f "$deb" Depends)
[ -n "$depends" ] || die "$deb has no Depends line"
# The recipe (invariants 1, 2 and 5). The hook runs after mmdebstrap
# installed the set, on this machine with the root in $1; mmdebstrap's own
# cleanup of apt's lists and cache is skipped, the hook does its own.
# shellcheck disable=SC2016 # the hook's $1 and $REWIND_FRESH_DEB are mmdebstrap's
hook='set -e
r=$1 repo=$1/var/local/rewind-depends
rm -f "$r"/var/cache/apt/archives/*.deb
cp "$REWIND_FRESH_DEB" "$r/tmp/rewind.deb"
chroot "$r" apt-get install -q -y --download-only --no-install-recommends /tmp/rewind.deb
rm -f "$r/tmp/rewind.deb" "$r"/var/cache/apt/archives/partial/*
mkdir -p "$repo"
mv "$r"/var/cache/apt/archives/*.deb "$repo/"
(cd "$repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null)
echo "deb [trusted=yes] file:/var/local/rewind-depends ./" >"$r/etc/apt/sources.list.d/rewind-depends.list"
rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin
mkdir -p "$r/var/lib/apt/lists/partial"
chroot "$r" apt-get update -q -o Dir::Etc::SourceList=/etc/apt/sources.list.d/rewind-depends.list \
    -o Dir::Etc::SourceParts=/nonexistent -o APT::Get::List-Cleanup=false
chroot "$r" apt-cache gencaches
echo "man-db man-db/auto-update boolean false" | chroot "$r" debconf-set-selections
rm -f "$r/var/lib/man-db/auto-update"
chroot "$r" dpkg-query -W -f "\${Package} \${Version}\n" >"$r/.fresh-versions"'
mmopts=(--quiet --mode=root --format=directory --variant=important --include=man-db
    --skip=cleanup/apt --customize-hook="$hook" "$suite")
key=$(printf '%s\n' "mkroot-fresh v1" "$mirror" "${mmopts[@]}" "Depends: $depends" |
    sha256sum | cut -c1-16)
dir=$cache/fresh-$key
if [ ! -d "$dir" ]; then # invariant 3
    mkdir -p "$cache"
    echo "mkroot-fresh: building a fresh Debian 12 root $dir (once per Depends line; 1.5 to 4 min)" >&2
    start=$(date +%s)
    tmp=$dir.tmp.$$
    trap 'rm -rf "$tmp"' EXIT
    REWIND_FRESH_DEB=$deb mmdebstrap "${mmopts[@]}" "$tmp" "$mirror" ||
        die "mmdebstrap failed (is the Debian mirror $mirror reachable?)"
    echo "$depends" >"$tmp/.fresh-depends"
    ls "$tmp"/var/local/rewind-depends/*.deb >/dev/null 2>&1 ||
        die "no .deb downloaded for Depends: $depends"
    if ! mv -T "$tmp" "$dir" 2>/dev/null; then # another build made it first
        [ -f "$dir/.fresh-depends" ] || die "cannot rename $tmp to $dir"
        rm -rf "$tmp"
    fi
    trap - EXIT
    # only the newest is kept; a build under way elsewhere (its pid alive) stays
    for old in "$cache"/fresh-*; do
        case $old in
        "$dir") continue ;;
        *.tmp.*) ! kill -0 "${old##*.tmp.}" 2>/dev/null || continue ;;
        esac
        rm -rf "$old"
    done
    echo "mkroot-fresh: $dir in $(($(date +%s) - start)) s ($(du -sh "$dir" | cut -f1)," \
        "$(ls "$dir"/var/local/rewind-depends/*.deb | wc -l) .debs for rewind's Depends)" >&2
fi
mkdir -p "$(dirname "$link")"
ln -sfn "$dir" "$link"
