# Test derivations for rewind nix (docs/nix.md): busybox is the only
# input, added to the store from ./busybox (tests/nix/setup.sh); the
# thread-pool tests also use ./tools (examples/pool, built static).
let
  bb = builtins.path { path = ./busybox; name = "busybox"; };
  tools = builtins.path { path = ./tools; name = "pool-tools"; };
  mkx = extra: name: script: derivation ({
    inherit name;
    system = "x86_64-linux";
    builder = "${bb}/bin/sh";
    args = [ "-c" script ];
    PATH = "${bb}/bin";
  } // extra);
  mk = mkx { };
in {
  # a reproducible build: a few files, a directory, an executable, a link
  hello = mk "hello" ''
    mkdir -p $out/bin $out/share
    echo "hello from rewind" > $out/share/greeting
    printf '#!/bin/sh\necho hi\n' > $out/bin/hi
    chmod 755 $out/bin/hi
    ln -s ../share/greeting $out/link
  '';
  # embeds the order the build directory is read in (find by its path: so
  # busybox's shell execs it and rewind blame names it, docs/nix.md)
  listing = mk "listing" ''
    mkdir -p src $out
    for f in alpha beta gamma delta epsilon zeta eta theta; do echo $f > src/$f; done
    ${bb}/bin/find src > $out/list
  '';
  # a build whose test suite runs a thread pool with a shutdown race
  # (examples/pool): under some schedules the test crashes, the build fails
  threads = mk "threads" ''
    mkdir -p $out
    ${tools}/bin/pool > $out/test-result
  '';
  # the same build with the race fixed
  threads-fixed = mk "threads-fixed" ''
    mkdir -p $out
    ${tools}/bin/pool-fixed > $out/test-result
  '';
  # writes the date: the host's build and the VM's (its --epoch) differ
  stamp = mk "stamp" ''
    date +%s > $out
  '';
  # needs the network: fails in the VM, which has none
  fetch = mkx {
    outputHashMode = "flat";
    outputHashAlgo = "sha256";
    outputHash = "0000000000000000000000000000000000000000000000000000";
  } "fetch" ''
    wget -q -O $out http://example.com/
  '';
}
