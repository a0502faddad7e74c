#!/usr/bin/env bash
# Makes this machine's static musl target the default for `cargo build` and
# `cargo test` in this checkout, so that the tests run the build that ships:
# writes .cargo/host.toml (not in git; .cargo/config.toml includes it) and
# installs the target with rustup when it is missing. Prints the target.
#
#   bash scripts/host-target.sh          # x86_64-unknown-linux-musl, or aarch64-...
#
# Only x86_64 and aarch64 hosts have a musl target rustup serves and the
# test suite runs on; elsewhere this says so and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
case "$host" in
    x86_64-unknown-linux-* | aarch64-unknown-linux-*) target="${host%%-*}-unknown-linux-musl" ;;
    *)
        echo "host-target.sh: no musl test target for host $host (x86_64 and aarch64 Linux only)" >&2
        exit 1
        ;;
esac
rustup target list --installed | grep -qx "$target" || rustup target add "$target" >&2
want=$(printf '# Written by scripts/host-target.sh for host %s; not in git.\n[build]\ntarget = "%s"\n' "$host" "$target")
if [ "$(cat .cargo/host.toml 2>/dev/null)" != "$want" ]; then
    printf '%s\n' "$want" > .cargo/host.toml
fi
echo "$target"
