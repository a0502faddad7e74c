#!/usr/bin/env bash
# Rebuilds part of the release in dist/ somewhere else, as someone else, and
# checks that the bytes are the same:
#
#   bash scripts/release.sh                  # dist/, from a committed tree
#   bash scripts/reproduce.sh                # x86_64, aarch64 (musl), armv7 (static glibc)
#   bash scripts/reproduce.sh s390x i686     # others
#   bash scripts/reproduce.sh --keep ...     # keep the rebuild (for diffoscope)
#
# The rebuild is scripts/release.sh of dist/'s commit (dist/RELEASE.md
# names it) in a fresh clone under /tmp, with everything that should not
# matter made different from the first build:
#
#   - another directory for the source, the target dir and the cargo home
#     (a new one, offline, given the crates and index the first build used);
#   - another user (uid 4242, no groups, no passwd entry), HOME, umask 077;
#   - another locale (C.UTF-8, or POSIX if the first build had C.UTF-8) and
#     time zone (UTC+05:45), and a later time;
#   - the same toolchain seen at another path (bind-mounted in a private
#     mount namespace, so that its sysroot path differs too).
#
# For each architecture the binary, its Debian package (and a static glibc
# binary's notice) and the SBOM must be identical to dist/'s; a difference
# prints the first differing bytes.
# Runs as root (the mount namespace and the user switch). Ends with
# "N passed, M failed"; exit 1 when anything differed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. scripts/release-targets.sh
src=$PWD

if [ "$(id -u)" != 0 ]; then
    echo "reproduce.sh: run as root (it switches user in a private mount namespace)" >&2
    exit 2
fi
keep=false
if [ "${1:-}" = --keep ]; then
    keep=true
    shift
fi
archs=("$@")
[ "${#archs[@]}" -gt 0 ] || archs=(x86_64 aarch64 armv7)
for arch in "${archs[@]}"; do
    release_target_row "$arch" >/dev/null || {
        echo "reproduce.sh: no such architecture: $arch" >&2
        exit 2
    }
    [ -f "dist/vigil-$arch" ] || {
        echo "reproduce.sh: dist/vigil-$arch missing: run scripts/release.sh first" >&2
        exit 2
    }
done
commit=$(sed -n 's/^Commit `\([0-9a-f]\{40\}\)`.*/\1/p' dist/RELEASE.md 2>/dev/null)
if [ -z "$commit" ]; then
    echo "reproduce.sh: dist/ was not built from a committed tree (dist/RELEASE.md: $(grep -m1 '^Commit' dist/RELEASE.md 2>/dev/null))" >&2
    exit 2
fi
version=$(release_version)

uid=4242
work=$(mktemp -d /tmp/vigil-rebuild.XXXXXX)
if $keep; then
    trap 'echo "reproduce.sh: the rebuild is kept in $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi
chmod 0755 "$work"
mkdir -p "$work/home" "$work/cargo/registry" "$work/cargo/bin" "$work/rust"

echo "== rebuild of ${archs[*]} at commit ${commit:0:12} in $work/src"
git clone --quiet --no-checkout "$src" "$work/src"
git -C "$work/src" checkout --quiet --detach "$commit"

# The cargo home: the crates and index the first build had, so that the
# rebuild runs offline, and cargo-auditable with cargo's record of it.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
cp -r "$cargo_home/registry/index" "$cargo_home/registry/cache" "$work/cargo/registry/"
cp "$(command -v cargo-auditable)" "$work/cargo/bin/"
for f in .crates.toml .crates2.json; do
    [ -f "$cargo_home/$f" ] && cp "$cargo_home/$f" "$work/cargo/"
done
chown -R "$uid:$uid" "$work/home" "$work/cargo" "$work/src"

# A locale and time zone other than the first build's.
locale=C.UTF-8
[ "${LC_ALL:-${LANG:-}}" = C.UTF-8 ] && locale=POSIX
sysroot=$(rustc --print sysroot)

t0=$SECONDS
unshare --mount --propagation private -- bash -c '
    set -e
    mount --bind "$1" "$2/rust"
    mount -o remount,bind,ro "$2/rust"
    shift 2
    exec "$@"' _ "$sysroot" "$work" \
    setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all -- \
    env -i PATH="$work/rust/bin:$work/cargo/bin:/usr/local/bin:/usr/bin:/bin" \
    HOME="$work/home" USER=rebuild LOGNAME=rebuild LC_ALL="$locale" TZ=NPT-5:45 \
    CARGO_HOME="$work/cargo" CARGO_NET_OFFLINE=true \
    bash -c 'umask 077 && cd "$1" && shift && bash scripts/release.sh "$@"' _ "$work/src" "${archs[@]}" \
    >"$work/rebuild.log" 2>&1
status=$?
echo "== the rebuild took $((SECONDS - t0)) s (exit $status)"

passed=0
failed=0
same() { # FILE: dist/FILE and the rebuild's are identical
    local a="dist/$1" b="$work/src/dist/$1"
    if [ -f "$b" ] && cmp -s "$a" "$b"; then
        passed=$((passed + 1))
        echo "  ok    $1 identical: $(sha256sum "$a" | cut -d' ' -f1)"
    else
        failed=$((failed + 1))
        echo "  FAIL  $1 differs: $(sha256sum "$a" | cut -d' ' -f1) here, $(sha256sum "$b" 2>/dev/null | cut -d' ' -f1) rebuilt"
        [ -f "$b" ] && cmp -l "$a" "$b" 2>&1 | head -5 | sed 's/^/        /'
    fi
}
if [ "$status" != 0 ]; then
    failed=$((failed + 1))
    echo "  FAIL  the rebuild failed:"
    tail -20 "$work/rebuild.log" | sed 's/^/        /'
fi
for arch in "${archs[@]}"; do
    read -r _ _ _ debarch _ <<<"$(release_target_row "$arch")"
    same "vigil-$arch"
    same "vigil_${version}_$debarch.deb"
    [ -f "dist/vigil_${version}_$arch.glibc.txt" ] && same "vigil_${version}_$arch.glibc.txt"
done
same "vigil_$version.cdx.json"
echo "reproduce: $passed passed, $failed failed"
[ "$failed" = 0 ]
