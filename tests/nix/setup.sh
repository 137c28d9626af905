#!/usr/bin/env bash
# tests/nix/setup.sh DIR: a single-user Nix store under DIR that works offline
# (docs/nix.md). Prints the environment to use it, as `export` lines, and
# writes DIR/busybox/bin (busybox-static and one symlink per applet) and
# DIR/default.nix (the test derivations; their builder is that busybox,
# added to the store by builtins.path, so no nixpkgs is needed).
#
# Nix 2.8 takes the store's place from the environment: NIX_STORE_DIR (the
# store paths are DIR/nix/store/..., not /nix/store), NIX_STATE_DIR,
# NIX_LOG_DIR and NIX_CONF_DIR (nix.conf: no build users, no sandbox, no
# substituters). Eval: `. <(tests/nix/setup.sh DIR)` then nix-build etc.
set -euo pipefail
dir=$(mkdir -p "$1" && cd "$1" && pwd)
command -v nix-build >/dev/null || { echo "setup.sh: nix-build missing (apt-get install nix-bin)" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "setup.sh: /bin/busybox missing (apt-get install busybox-static)" >&2; exit 1; }
mkdir -p "$dir/nix/store" "$dir/nix/var/nix" "$dir/nix/var/log/nix" "$dir/nix/etc" "$dir/busybox/bin"
printf 'build-users-group =\nsandbox = false\nsubstituters =\nexperimental-features = nix-command\n' \
    >"$dir/nix/etc/nix.conf"
cp /bin/busybox "$dir/busybox/bin/busybox"
for a in $(/bin/busybox --list); do
    [ "$a" = busybox ] || ln -sf busybox "$dir/busybox/bin/$a"
done
cp "$(dirname "${BASH_SOURCE[0]}")/default.nix" "$dir/default.nix"
cat <<ENV
export NIX_STORE_DIR=$dir/nix/store
export NIX_STATE_DIR=$dir/nix/var/nix
export NIX_LOG_DIR=$dir/nix/var/log/nix
export NIX_CONF_DIR=$dir/nix/etc
ENV
