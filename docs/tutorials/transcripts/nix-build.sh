source "$TX_LIB"
source "$(dirname "$TX_LIB")/nix-lib.sh"
nx 'nix-build nixs/default.nix -A hello --no-out-link 2>/dev/null'
nx 'rewind nix -f nixs/default.nix -A hello'
cd nixs/flake
nx 'rewind nix .#hello --json | python3 -m json.tool'
exit 0
