#!/usr/bin/env bash
# tests/nix/setup.sh DIR: a single-user Nix store under DIR that works offline
# (docs/nix.md). Prints the environment to use it, as `export` lines, and
# writes the flake DIR/flake: busybox/bin (busybox-static and one symlink
# per applet), tools/bin (the thread pool of examples/pool, racy and fixed,
# from build/guest), ls-dist (GNU coreutils' ls and patchelf with the
# shared libraries each loads, copied from the host by copy-elf.sh: the
# coreutils-ls derivation makes them an ls that runs from the store),
# default.nix (the test derivations; their builder is
# that busybox, added to the store by builtins.path, so no nixpkgs is
# needed) and flake.nix (the same derivations as packages); and
# DIR/default.nix, which imports DIR/flake/default.nix.
#
# Nix 2.8 takes the store's place from the environment: NIX_STORE_DIR (the
# store paths are DIR/nix/store/..., not /nix/store), NIX_STATE_DIR,
# NIX_LOG_DIR and NIX_CONF_DIR (nix.conf: no build users, no sandbox, no
# substituters). Eval: `. <(tests/nix/setup.sh DIR)` then nix-build etc.
set -euo pipefail
dir=$(mkdir -p "$1" && cd "$1" && pwd)
command -v nix-build >/dev/null || { echo "setup.sh: nix-build missing (apt-get install nix-bin)" >&2; exit 1; }
command -v patchelf >/dev/null || { echo "setup.sh: patchelf missing (apt-get install patchelf)" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "setup.sh: /bin/busybox missing (apt-get install busybox-static)" >&2; exit 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
guest=${REWIND_GUEST_BIN:-$here/../../build/guest}
for p in pool pool-fixed; do
    [ -x "$guest/$p" ] || { echo "setup.sh: $guest/$p missing (make build/roots/test.erofs)" >&2; exit 1; }
done
fl=$dir/flake
mkdir -p "$dir/nix/store" "$dir/nix/var/nix" "$dir/nix/var/log/nix" "$dir/nix/etc" "$dir/cache" \
    "$fl/busybox/bin" "$fl/tools/bin"
# no registry, substituter or sandbox: nothing is fetched
echo '{"flakes": [], "version": 2}' >"$dir/nix/etc/registry.json"
printf 'build-users-group =\nsandbox = false\nsubstituters =\nexperimental-features = nix-command flakes\nflake-registry = %s\n' \
    "$dir/nix/etc/registry.json" >"$dir/nix/etc/nix.conf"
cp /bin/busybox "$fl/busybox/bin/busybox"
# one process for the ~400 links (a `ln` each took most of a minute under
# the test host's software CPU)
python3 -S -c 'import os, sys
for a in sys.argv[2:]:
    if a != "busybox":
        p = os.path.join(sys.argv[1], a)
        if os.path.lexists(p):
            os.unlink(p)
        os.symlink("busybox", p)' "$fl/busybox/bin" $(/bin/busybox --list)
cp "$guest/pool" "$guest/pool-fixed" "$fl/tools/bin/"
"$here/copy-elf.sh" /bin/ls "$fl/ls-dist/ls/bin" "$fl/ls-dist/ls/lib"
"$here/copy-elf.sh" "$(command -v patchelf)" "$fl/ls-dist/patchelf/bin" "$fl/ls-dist/patchelf/lib"
cp "$here/default.nix" "$here/flake.nix" "$fl/"
echo 'import ./flake/default.nix' >"$dir/default.nix"
cat <<ENV
export NIX_STORE_DIR=$dir/nix/store
export NIX_STATE_DIR=$dir/nix/var/nix
export NIX_LOG_DIR=$dir/nix/var/log/nix
export NIX_CONF_DIR=$dir/nix/etc
export XDG_CACHE_HOME=$dir/cache
ENV
