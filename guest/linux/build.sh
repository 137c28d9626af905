#!/usr/bin/env bash
# guest/linux/build.sh OUTDIR
#
# Builds the rewind guest kernel (Debian's linux-source-6.1 + rewind.patch +
# rewind.config on top of tinyconfig) and puts OUTDIR/vmlinux and
# OUTDIR/kernel.hash there. Builds are cached by the hash of every input in
# ${REWIND_KERNEL_CACHE:-$HOME/.cache/rewind/kernel}/<hash>/.
#
# Environment:
#   REWIND_KERNEL_CACHE   cache directory (default ~/.cache/rewind/kernel)
#   REWIND_LINUX_SOURCE   kernel tarball (default /usr/src/linux-source-6.1.tar.xz)
#   REWIND_KERNEL_JOBS    make -j (default: nproc)
set -euo pipefail

die() { echo "guest/linux/build.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: guest/linux/build.sh OUTDIR"
OUTDIR=$1

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ABI=$HERE/../include/rewind_abi.h
PATCH=$HERE/rewind.patch
FRAGMENT=$HERE/rewind.config
SELF=$HERE/build.sh
TARBALL=${REWIND_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
CACHE=${REWIND_KERNEL_CACHE:-$HOME/.cache/rewind/kernel}
JOBS=${REWIND_KERNEL_JOBS:-$(nproc)}

for f in "$ABI" "$PATCH" "$FRAGMENT"; do
	[ -f "$f" ] || die "missing input $f"
done
# Feature patches, applied after rewind.patch in name order (one file per
# feature, so features touch the kernel without editing one shared file).
EXTRA=()
for f in "$HERE"/patches/*.patch; do
	[ -f "$f" ] && EXTRA+=("$f")
done

# --- build dependencies ------------------------------------------------------
missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_cmd gcc gcc
need_cmd make make
need_cmd bc bc
need_cmd bison bison
need_cmd flex flex
need_cmd cpio cpio
need_cmd xz xz-utils
need_cmd patch patch
need_cmd objcopy binutils
need_cmd objdump binutils
need_cmd perl perl
[ -f /usr/include/gelf.h ] || missing+=(libelf-dev)
[ -f /usr/include/openssl/opensslv.h ] || missing+=(libssl-dev)
if [ ! -f "$TARBALL" ] && [ -z "${REWIND_LINUX_SOURCE:-}" ]; then
	missing+=(linux-source-6.1)
fi
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "guest/linux/build.sh: installing ${missing[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; } ||
			die "apt-get install ${missing[*]} failed"
	else
		die "missing build dependencies: ${missing[*]} (apt-get install ${missing[*]})"
	fi
fi
[ -f "$TARBALL" ] || die "kernel source tarball not found: $TARBALL"

# --- the hash of every input -------------------------------------------------
# The toolchain is an input too: a different compiler makes a different kernel.
hash=$({
	echo "rewind-kernel-v1"
	sha256sum <"$TARBALL" | cut -d' ' -f1
	for f in "$PATCH" ${EXTRA[@]+"${EXTRA[@]}"} "$FRAGMENT" "$ABI" "$SELF"; do
		echo "$(basename "$f") $(sha256sum <"$f" | cut -d' ' -f1)"
	done
	gcc --version | sed -n 1p
	ld --version | sed -n 1p
} | sha256sum | cut -d' ' -f1)

entry=$CACHE/$hash

install_out() {
	mkdir -p "$OUTDIR"
	cp -f "$entry/vmlinux" "$OUTDIR/.vmlinux.tmp.$$"
	mv -f "$OUTDIR/.vmlinux.tmp.$$" "$OUTDIR/vmlinux"
	if [ -f "$entry/vmlinux.debug" ]; then
		cp -f "$entry/vmlinux.debug" "$OUTDIR/.vmlinux.debug.tmp.$$"
		mv -f "$OUTDIR/.vmlinux.debug.tmp.$$" "$OUTDIR/vmlinux.debug"
	fi
	echo "$hash" >"$OUTDIR/.kernel.hash.tmp.$$"
	mv -f "$OUTDIR/.kernel.hash.tmp.$$" "$OUTDIR/kernel.hash"
}

if [ -f "$entry/vmlinux" ]; then
	install_out
	echo "kernel $hash (cached) -> $OUTDIR/vmlinux"
	exit 0
fi

mkdir -p "$CACHE"
# One builder per hash; a second caller waits and then finds the cache entry.
exec 9>"$CACHE/.lock-$hash"
if command -v flock >/dev/null 2>&1; then
	flock 9
	if [ -f "$entry/vmlinux" ]; then
		install_out
		echo "kernel $hash (cached) -> $OUTDIR/vmlinux"
		exit 0
	fi
fi

# --- build in a temporary directory, move into the cache at the end ----------
tmp=$(mktemp -d "$CACHE/.build-$hash.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
src=$tmp/src
log=$tmp/build.log
mkdir -p "$src" "$tmp/out"

echo "building kernel $hash (log: $log) ..." >&2
start=$(date +%s)

fail() {
	echo "guest/linux/build.sh: kernel build failed: $1 (last lines of the log follow)" >&2
	tail -n 40 "$log" >&2 || true
	exit 1
}

tar -xf "$TARBALL" -C "$src" --strip-components=1 >>"$log" 2>&1 || fail "cannot unpack $TARBALL"
patch -d "$src" -p1 --batch --forward <"$PATCH" >>"$log" 2>&1 || fail "rewind.patch does not apply"
for f in ${EXTRA[@]+"${EXTRA[@]}"}; do
	patch -d "$src" -p1 --batch --forward <"$f" >>"$log" 2>&1 || fail "$(basename "$f") does not apply"
done
cp "$ABI" "$src/include/uapi/linux/rewind_abi.h"

# Reproducible: no build time, user, host or path in the image.
export KBUILD_BUILD_TIMESTAMP="1970-01-01 00:00:00 UTC"
export KBUILD_BUILD_USER=rewind KBUILD_BUILD_HOST=rewind KBUILD_BUILD_VERSION=1
export LC_ALL=C
MAKE=(make -C "$src" ARCH=x86_64)

"${MAKE[@]}" tinyconfig >>"$log" 2>&1 || fail "make tinyconfig"
"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "$FRAGMENT" >>"$log" 2>&1 ||
	fail "merge_config.sh"
"${MAKE[@]}" olddefconfig >>"$log" 2>&1 || fail "make olddefconfig"

# Every line of the fragment must hold in the final .config.
bad=()
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF -- "$line" "$src/.config" || bad+=("$line (got: $(grep -E "^(# )?${line%%=*}[= ]" "$src/.config" || echo unset))")
		;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym% is not set}
		if grep -q "^$sym=" "$src/.config"; then
			bad+=("$line (got: $(grep "^$sym=" "$src/.config"))")
		fi
		;;
	esac
done <"$FRAGMENT"
if [ ${#bad[@]} -gt 0 ]; then
	echo "guest/linux/build.sh: rewind.config options that did not take effect:" >&2
	printf '  %s\n' "${bad[@]}" >&2
	exit 1
fi

"${MAKE[@]}" -j"$JOBS" vmlinux >>"$log" 2>&1 ||
	fail "$(grep -m1 -E '(error|Error)[: ]' "$log" || echo 'make vmlinux')"

nm "$src/vmlinux" >"$tmp/nm.txt" 2>>"$log" || fail "nm vmlinux"
grep -q ' x86_hyper_rewind$' "$tmp/nm.txt" || fail "vmlinux lacks x86_hyper_rewind"

# No unchecked RDTSC/RDRAND/HLT site may appear (guest/linux/audit.sh).
if ! audit=$("$HERE/audit.sh" "$src/vmlinux" 2>&1); then
	echo "$audit" >&2
	die "kernel audit failed: an unchecked TSC/RNG/HLT site (see above)"
fi
echo "$audit" >>"$log"

if grep -q '^CONFIG_DEBUG_INFO=y' "$src/.config"; then
	cp "$src/vmlinux" "$tmp/out/vmlinux.debug"
fi
objcopy --strip-debug "$src/vmlinux" "$tmp/out/vmlinux" >>"$log" 2>&1 || fail "objcopy --strip-debug"
cp "$src/.config" "$tmp/out/config"
cp "$src/System.map" "$tmp/out/System.map"
echo "$hash" >"$tmp/out/kernel.hash"
end=$(date +%s)
echo "built in $((end - start)) s" >>"$log"
cp "$log" "$tmp/out/build.log"

# Atomic publish: rename the finished directory into place.
if ! mv -T "$tmp/out" "$entry" 2>/dev/null; then
	[ -f "$entry/vmlinux" ] || die "cannot publish $entry"
fi
install_out
echo "kernel $hash built in $((end - start)) s -> $OUTDIR/vmlinux"
