#!/usr/bin/env bash
# Makes the Debian package of one release binary, with dpkg-deb alone:
#
#   bash scripts/deb.sh ARCH      # dist/vigil-ARCH -> dist/vigil_VERSION_DEBARCH.deb
#
# scripts/release.sh calls it for each binary it builds, after the SBOM
# (whose component list the copyright file names). The package holds
#
#   /usr/bin/vigil                          the static binary
#   /usr/share/man/man1/vigil.1.gz          the man page
#   /usr/share/doc/vigil/copyright          machine-readable (DEP-5)
#   /usr/share/doc/vigil/changelog.gz       this release's entry
#   /usr/share/doc/vigil/README.md.gz
#   /usr/share/doc/vigil/glibc.txt.gz       a static glibc binary's notice
#                                           (dist/vigil_VERSION_ARCH.glibc.txt)
#   /usr/share/lintian/overrides/vigil      the tags it carries, each explained
#
# It depends on nothing (the binary is static). The bytes depend only on the
# inputs: every file's time is SOURCE_DATE_EPOCH (which dpkg-deb also uses
# for the archive's members), owners are root, modes are set here rather
# than taken from the umask, and gzip stores no name or time.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-targets.sh

arch=${1:?usage: scripts/deb.sh ARCH}
row=$(release_target_row "$arch") || {
    echo "deb.sh: no such architecture: $arch" >&2
    exit 2
}
read -r _ target _ debarch _ <<<"$row"
: "${SOURCE_DATE_EPOCH:?deb.sh: SOURCE_DATE_EPOCH is not set (scripts/release.sh sets it)}"
commit=${VIGIL_COMMIT:-unknown}
version=$(release_version)
bin=dist/vigil-$arch
sbom=dist/vigil_$version.cdx.json
for f in "$bin" "$sbom"; do
    [ -f "$f" ] || {
        echo "deb.sh: $f missing (scripts/release.sh makes it)" >&2
        exit 2
    }
done
# A static glibc binary carries glibc: the package says which, and where
# its source is, from the binary's notice (scripts/glibc-notice.sh), and
# names that source in Built-Using, as Debian's own statically linked
# packages do.
built_using=
case "$target" in
    *-musl) libc="musl, MIT" ;;
    *)
        notice=dist/vigil_${version}_$arch.glibc.txt
        [ -f "$notice" ] || {
            echo "deb.sh: $notice missing (scripts/release.sh makes it)" >&2
            exit 2
        }
        built_using=$(sed -n 's/^Built-Using: //p' "$notice")
        glibc_source=$(sed -n 's/^Source: //p' "$notice")
        libc="the GNU C Library, LGPL-2.1+${glibc_source:+; its source:
 $glibc_source}"
        ;;
esac
# The project has no contact address yet: the reserved .invalid domain
# says so rather than invent one (the lintian overrides explain the tag).
maintainer="The vigil authors <maintainers@vigil.invalid>"

root=$(mktemp -d /tmp/vigil-deb.XXXXXX)
trap 'rm -rf "$root"' EXIT
install -D -m 0755 "$bin" "$root/usr/bin/vigil"
install -d -m 0755 "$root/usr/share/man/man1" "$root/usr/share/doc/vigil" "$root/usr/share/lintian/overrides" "$root/DEBIAN"
gzip -9n <docs/vigil.1 >"$root/usr/share/man/man1/vigil.1.gz"
gzip -9n <README.md >"$root/usr/share/doc/vigil/README.md.gz"
install -m 0644 packaging/deb/lintian-overrides "$root/usr/share/lintian/overrides/vigil"
# What the LGPL asks to go with the binary, wherever the package goes.
[ -n "${notice:-}" ] && gzip -9n <"$notice" >"$root/usr/share/doc/vigil/glibc.txt.gz"

when=$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")
cat <<EOF | gzip -9n >"$root/usr/share/doc/vigil/changelog.gz"
vigil ($version) unstable; urgency=medium

  * vigil $version for $target,
    built from commit $commit by scripts/release.sh.

 -- $maintainer  $when
EOF

# The statically linked parts, from the SBOM's linked components.
linked=$(python3 - "$sbom" <<'PY'
import json, sys
bom = json.load(open(sys.argv[1]))
for c in bom["components"]:
    if c.get("scope") == "required":
        lic = " AND ".join(l["expression"] for l in c.get("licenses", [])) or "unknown"
        print(f" {c['name']} {c['version']} ({lic})")
PY
)
year=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
{
    cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vigil
Upstream-Contact: $maintainer
Comment: /usr/bin/vigil is a static executable. Besides vigil's own code
 it contains the Rust standard library (MIT OR Apache-2.0), the C library
 ($libc), and these crates from crates.io, each under its
 own license:
 .
$linked
 .
 The texts of Apache-2.0 and LGPL-2.1 are in /usr/share/common-licenses/.
 The binary lists the same crates itself, in cargo-auditable's format
 (its .dep-v0 section).

Files: *
Copyright: $year The vigil authors
License: Expat
EOF
    # LICENSE from its permission notice on, in the format's continuation
    # lines (an empty line is " .").
    awk 'on { print ($0 == "" ? " ." : " " $0); next } /^Permission/ { on = 1; print " " $0 }' LICENSE
} >"$root/usr/share/doc/vigil/copyright"

# Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up,
# and one per directory.
size=$(find "$root" -path "$root/DEBIAN" -prune -o -type f -printf '%s\n' | awk '{k += int(($1 + 1023) / 1024)} END {print k}')
dirs=$(find "$root" -path "$root/DEBIAN" -prune -o -type d -printf . | wc -c)
cat >"$root/DEBIAN/control" <<EOF
Package: vigil
Version: $version
Architecture: $debarch
Maintainer: $maintainer
Installed-Size: $((size + dirs - 1))
Section: admin
Priority: optional${built_using:+
Built-Using: $built_using}
Description: small static PID 1 for containers
 vigil starts one command, passes signals on to it, reaps every zombie,
 runs optional post-start and pre-stop hooks, shuts the container down
 gracefully, and exits with a status that says what happened. Its command
 line is a drop-in for tini's, and installed as the container engine's
 init (dockerd's init-path set to /usr/bin/vigil) it answers as
 docker-init does.
 .
 The binary is statically linked and depends on nothing, so it also runs
 in images without a C library (FROM scratch).
EOF
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +
find "$root/usr/share" -type f -exec chmod 0644 {} +
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

out=dist/vigil_${version}_$debarch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "$out"
