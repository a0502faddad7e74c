#!/usr/bin/env bash
# Signs a release's SHA256SUMS with minisign (Debian package minisign):
#
#   bash scripts/sign.sh SECRET_KEY [SHA256SUMS]    # default dist/SHA256SUMS
#
# writes SHA256SUMS.minisig beside it. Only SHA256SUMS is signed: it holds
# the SHA-256 of every other file of the release, so the one signature
# covers them all, and SHA256SUMS is the only file that has to be carried to
# the machine that holds the key (docs/install.md, "Signing a release").
# The trusted comment, which `minisign -V` prints and the signature covers,
# names the version and the commit, taken from RELEASE.md beside it.
# minisign asks for the key's password unless the key has none.
set -euo pipefail

key=${1:?usage: scripts/sign.sh SECRET_KEY [SHA256SUMS]}
sums=${2:-$(dirname "$0")/../dist/SHA256SUMS}
dir=$(dirname "$sums")
[ -f "$sums" ] || {
    echo "sign.sh: $sums missing (scripts/release.sh writes it)" >&2
    exit 2
}
title=$(sed -n '1s/^# //p' "$dir/RELEASE.md" 2>/dev/null)
commit=$(sed -n 's/^Commit `\([^`]*\)`.*/\1/p' "$dir/RELEASE.md" 2>/dev/null)
case "$commit" in
    "" | *-modified)
        echo "sign.sh: $dir/RELEASE.md names no clean commit (${commit:-none}): only a build of a commit is a release" >&2
        exit 2
        ;;
esac
minisign -S -s "$key" -m "$sums" -t "${title:-vigil}, commit $commit, SHA256SUMS"
echo "$sums.minisig"
