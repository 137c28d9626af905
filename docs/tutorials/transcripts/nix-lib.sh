# nix-lib.sh: sourced by the nix-*.sh transcripts (not a transcript). A
# store that works offline under the transcript's directory
# (tests/nix/setup.sh), and `nx`: tx with that directory left out of paths
# and each store path's hash (a function of the store's place, so of the
# directory) shown as <hash>.
TOP=$(cd "$(dirname "$TX_LIB")/../../.." && pwd)
NXBASE=$PWD
eval "$("$TOP/tests/nix/setup.sh" "$NXBASE/nixs")" || exit 2
nx() {
    tx "$@" >"$NXBASE/nx.out"
    local rc=$?
    sed -e "s|$NXBASE/||g" -e 's|/nix/store/[0-9a-df-np-sv-z]\{32\}-|/nix/store/<hash>-|g' "$NXBASE/nx.out"
    return $rc
}
