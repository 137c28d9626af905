source "$TX_LIB"
source "$(dirname "$TX_LIB")/nix-lib.sh"
# check's progress lines go to stderr; -j 1: the schedules in order
nx 'rewind check -j 1 -f nixs/default.nix -A threads 2>/dev/null'
failing=$(printf '%s\n' "$LAST_OUT" | sed -n 's/^passing run: .*failing run: \([0-9a-f]*\) .*/\1/p')
nx "rewind replay $failing"
nx 'rewind check -j 1 --schedules 16 -f nixs/default.nix -A threads-fixed 2>/dev/null'
exit 0
