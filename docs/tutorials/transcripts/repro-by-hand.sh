source "$TX_LIB"
"$(dirname "$TX_LIB")/../../../tests/nix/lsroot.sh" lsroot >/dev/null || exit 2
cat > build.sh <<'SH'
mkdir -p /build/src /build/out
for f in alpha beta gamma delta epsilon zeta eta theta; do echo $f > /build/src/$f; done
echo "# listing" > /build/out/list
/bin/ls -U /build/src >> /build/out/list
echo same > /build/out/same
SH
tx 'rewind run --root lsroot --collect /build/out --track-writes "/build/out/*" -- sh -c "$(cat build.sh)"'
a=$(rewind_last_id)
tx 'rewind run --root lsroot --collect /build/out --track-writes "/build/out/*" --dirorder 1 -- sh -c "$(cat build.sh)"'
b=$(rewind_last_id)
tx rewind diff --files --no-diffoscope "$a" "$b"
tx rewind blame "$b" /build/out/list --diff "$a"
tx rewind blame "$b" /build/out/list 0
exit 0
