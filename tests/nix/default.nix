# Test derivations for rewind nix (docs/nix.md): busybox is the builder,
# added to the store from ./busybox (tests/nix/setup.sh); the thread-pool
# tests also use ./tools (examples/pool, built static), the listing GNU ls
# from ./ls-dist (the host's, with its libraries).
let
  bb = builtins.path { path = ./busybox; name = "busybox"; };
  tools = builtins.path { path = ./tools; name = "pool-tools"; };
  lsdist = builtins.path { path = ./ls-dist; name = "ls-dist"; };
  mkx = extra: name: script: derivation ({
    inherit name;
    system = "x86_64-linux";
    builder = "${bb}/bin/sh";
    args = [ "-c" script ];
    PATH = "${bb}/bin";
  } // extra);
  mk = mkx { };
  # GNU coreutils' ls that runs from the store: the host's ls and the
  # libraries it loads, its loader and library path set to $out/lib by
  # patchelf (itself run through its own copied loader). busybox's ls
  # always sorts; GNU ls -U lists a directory in the order it is read.
  coreutils-ls = mk "coreutils-ls" ''
    mkdir -p $out/bin $out/lib
    cp ${lsdist}/ls/bin/ls $out/bin/ls
    cp ${lsdist}/ls/lib/* $out/lib/
    chmod u+w $out/bin/ls $out/lib/*
    p=${lsdist}/patchelf
    $p/lib/ld-linux-x86-64.so.2 --library-path $p/lib $p/bin/patchelf \
      --set-interpreter $out/lib/ld-linux-x86-64.so.2 \
      --force-rpath --set-rpath $out/lib $out/bin/ls
  '';
in {
  inherit coreutils-ls;
  # a reproducible build: a few files, a directory, an executable, a link
  hello = mk "hello" ''
    mkdir -p $out/bin $out/share
    echo "hello from rewind" > $out/share/greeting
    printf '#!/bin/sh\necho hi\n' > $out/bin/hi
    chmod 755 $out/bin/hi
    ln -s ../share/greeting $out/link
  '';
  # embeds the order the build directory is read in: GNU ls -U does not
  # sort (called by its store path: busybox's shell execs it, and rewind
  # blame names it, docs/nix.md)
  listing = mk "listing" ''
    mkdir -p src $out
    for f in alpha beta gamma delta epsilon zeta eta theta; do echo $f > src/$f; done
    ${coreutils-ls}/bin/ls -U src > $out/list
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
