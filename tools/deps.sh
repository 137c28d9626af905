#!/usr/bin/env bash
# Install the Debian packages rewind needs to build and test, if missing.
# Idempotent and quick when everything is present. Needs root to install.
set -euo pipefail
pkgs=(gcc make libc6-dev libssl-dev libzstd-dev libjansson-dev erofs-utils busybox-static
      zstd linux-source-6.1 bc bison flex libelf-dev cpio xz-utils kmod qemu-system-x86 python3
      clang-14 clang libclang-rt-14-dev golang-go)
# rewind serve: libmicrohttpd; its browser test: chromium, and node with npm
# (any nodejs that brings npm will do; `make` runs npm ci in web/)
pkgs+=(libmicrohttpd-dev chromium curl)
command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
pkgs+=(mmdebstrap)  # tools/mkroot-debian.sh (the compatibility suite's root), tools/mkroot-fresh.sh
pkgs+=(slurm-wlm munge)  # check --via slurm: tools/slurm-cluster.sh, tests/system/t_slurm.sh
pkgs+=(liblz4-dev)  # bench/ingest.sh: lz4 against zstd for keyframe pages
pkgs+=(nix-bin diffoscope-minimal)  # docs/nix.md: rewind nix (a local store), diff --files
pkgs+=(patchelf)  # tests/nix/default.nix: GNU ls in the offline test store (docs/nix.md)
pkgs+=(gdb libdw-dev)  # rewind gdb (Debian's gdb), rewind where (elfutils' libdwfl)
pkgs+=(dpkg-dev lintian zsh man-db)  # make deb (docs/install.md); tests/system/t_install.sh
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "rewind: missing Debian packages: ${missing[*]} (run as root: apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "rewind: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -q >/dev/null 2>&1
    apt-get install -y -q "${missing[@]}" >/dev/null
}
