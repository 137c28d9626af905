source "$TX_LIB"
source "$(dirname "$TX_LIB")/nix-lib.sh"
nx 'rewind repro --vary dirorder -f nixs/default.nix -A listing 2>/dev/null'
nx 'rewind nix -f nixs/default.nix -A fetch'
exit 0
