# The test derivations of default.nix as a flake (no inputs: it evaluates
# offline): `nix build .#hello`, `rewind nix .#hello`.
{
  outputs = { self }: {
    packages.x86_64-linux = import ./default.nix;
  };
}
