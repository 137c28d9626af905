source "$TX_LIB"
# the root: busybox with GNU coreutils' ls as /bin/ls (busybox's ls sorts)
"$(dirname "$TX_LIB")/../../../tests/nix/lsroot.sh" lsroot >/dev/null || exit 2
# the build: its output embeds the order ls -U reads a directory in
cat > build.sh <<'SH'
mkdir -p /build/src /build/out
for f in alpha beta gamma delta epsilon zeta eta theta; do echo $f > /build/src/$f; done
echo "# listing" > /build/out/list
/bin/ls -U /build/src >> /build/out/list
echo same > /build/out/same
SH
tx cat build.sh
# repro's progress lines name the default epoch, which moves with the date
tx 'rewind repro --vary dirorder --root lsroot --collect /build/out -- sh -c "$(cat build.sh)" 2>/dev/null'
exit 0 # a build that does not reproduce (exit 1) is what the transcript shows
