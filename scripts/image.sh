#!/usr/bin/env bash
# Makes vigil's multi-arch image from the seven release binaries in dist/,
# with buildah, as an OCI archive of one image index (manifest list):
#
#   bash scripts/image.sh     # dist/vigil-* -> dist/vigil_VERSION.oci.tar
#
# scripts/release.sh calls it after building all seven. Each platform's
# image is `FROM scratch` with /vigil (root-owned, 0755) as its entrypoint,
# and the org.opencontainers.image.* labels: version, revision (the commit),
# created (SOURCE_DATE_EPOCH, also the time of the image and its files),
# source, licenses (MIT, and LGPL-2.1-or-later too on the static glibc
# platforms: their binaries carry glibc), title, description. The
# platforms: linux/amd64, arm64, 386, arm/v7, riscv64, s390x, ppc64le. To
# publish it (docs/install.md):
#
#   skopeo copy --all oci-archive:dist/vigil_VERSION.oci.tar docker://REGISTRY/vigil:VERSION
#
# buildah works in a storage of its own under /tmp, removed at the end, so
# that nothing is left in the machine's image store. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-targets.sh

: "${SOURCE_DATE_EPOCH:?image.sh: SOURCE_DATE_EPOCH is not set (scripts/release.sh sets it)}"
version=$(release_version)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- 2>/dev/null || revision="$revision-modified"
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
package=$(sed -n '/^\[package\]/,/^\[/s/^name = "\(.*\)"/\1/p' Cargo.toml | head -1)
# Where the source of this version is published: the crate on crates.io
# (the project has no public repository yet; Cargo.toml names none).
source_url=https://crates.io/crates/$package/$version
description=$(sed -n '/^\[package\]/,/^\[/s/^description = "\(.*\)"/\1/p' Cargo.toml | head -1)
out=dist/vigil_$version.oci.tar

store=$(mktemp -d /tmp/vigil-image.XXXXXX)
b() { buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs "$@"; }
cleanup() {
    b rm --all >/dev/null 2>&1 || true
    rm -rf "$store"
}
trap cleanup EXIT

list=vigil-release-list
b manifest create "$list" >/dev/null
for row in "${release_targets[@]}"; do
    read -r arch _ _ _ platform _ <<<"$row"
    bin=dist/vigil-$arch
    [ -f "$bin" ] || {
        echo "image.sh: $bin missing (scripts/release.sh builds all seven)" >&2
        exit 2
    }
    IFS=/ read -r os goarch variant <<<"$platform"
    # A static glibc binary carries glibc, LGPL-2.1-or-later
    # (dist/vigil_VERSION_ARCH.glibc.txt).
    read -r _ target _ <<<"$row"
    licenses=MIT
    [[ "$target" == *-musl ]] || licenses="MIT AND LGPL-2.1-or-later"
    ctr=$(b from scratch)
    b copy --chown 0:0 --chmod 0755 "$ctr" "$bin" /vigil >/dev/null
    b config --os "$os" --arch "$goarch" ${variant:+--variant "$variant"} \
        --entrypoint '["/vigil"]' --cmd '' --created-by "COPY $bin /vigil" \
        --label "org.opencontainers.image.version=$version" \
        --label "org.opencontainers.image.revision=$revision" \
        --label "org.opencontainers.image.created=$created" \
        --label "org.opencontainers.image.source=$source_url" \
        --label "org.opencontainers.image.licenses=$licenses" \
        --label "org.opencontainers.image.title=vigil" \
        --label "org.opencontainers.image.description=$description" \
        "$ctr"
    b commit --quiet --timestamp "$SOURCE_DATE_EPOCH" --format oci "$ctr" "vigil-release:$arch" >/dev/null
    b manifest add "$list" "containers-storage:localhost/vigil-release:$arch" >/dev/null
    b rm "$ctr" >/dev/null
done
rm -f "$out"
b manifest push --quiet --all --format oci "$list" "oci-archive:$store/image.tar:vigil:$version"
# The images inside are the same bytes from build to build, but the archive
# around them carries the time it was written: written again here with
# SOURCE_DATE_EPOCH, root's ownership and the members in order.
python3 - "$store/image.tar" "$out" "$SOURCE_DATE_EPOCH" <<'PY'
import sys, tarfile
src, dst, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
with tarfile.open(src) as t, tarfile.open(dst, "w", format=tarfile.PAX_FORMAT) as out:
    for m in sorted(t.getmembers(), key=lambda m: m.name):
        m.mtime, m.uid, m.gid, m.uname, m.gname = epoch, 0, 0, "", ""
        m.mode = 0o755 if m.isdir() else 0o644
        m.pax_headers = {}
        out.addfile(m, t.extractfile(m) if m.isfile() else None)
PY
echo "$out"
