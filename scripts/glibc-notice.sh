#!/usr/bin/env bash
# Prints what the LGPL asks to go with a program linked statically with the
# GNU C Library, for one static glibc release binary:
#
#   bash scripts/glibc-notice.sh ARCH COMMIT [GLIBC_DIR]  # > dist/vigil_VERSION_ARCH.glibc.txt
#
# scripts/release.sh writes it next to each such binary (armv7, riscv64,
# s390x, ppc64le); scripts/deb.sh takes the package's Built-Using from it;
# scripts/release-check.sh checks it. The head is `Key: value` lines, one
# per fact, for machines; the rest says the same for people.
#
# (The text below is an unquoted here-document, for its variables: no
# backquote may appear in it, or the shell would run what it quotes.)
#
# The facts come from the Debian package that holds the libc.a the binary
# was linked with, libc6-dev-DEBARCH-cross: its version, its own source
# package (cross-toolchain-base, which builds it from Debian's glibc), and
# its Built-Using field, which names the glibc source version exactly.
# GLIBC_DIR: the binary was relinked against the glibc there instead
# (VIGIL_GLIBC_DIR), whose source is whoever built it's to give.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-targets.sh

arch=${1:?usage: scripts/glibc-notice.sh ARCH COMMIT [GLIBC_DIR]}
commit=${2:?usage: scripts/glibc-notice.sh ARCH COMMIT [GLIBC_DIR]}
glibc_dir=${3:-}
row=$(release_target_row "$arch") || {
    echo "glibc-notice.sh: no such architecture: $arch" >&2
    exit 2
}
read -r _ target _ debarch _ <<<"$row"
case "$target" in *-musl)
    echo "glibc-notice.sh: vigil-$arch is linked with musl, not glibc" >&2
    exit 2
    ;;
esac
version=$(release_version)
package=$(sed -n '/^\[package\]/,/^\[/s/^name = "\(.*\)"/\1/p' Cargo.toml | head -1)
rustc=$(rustc -V)
linker=$(sed -n "/^\[target\.$target\]/,/^\[/s/^linker = \"\(.*\)\"/\1/p" .cargo/config.toml)

cross=libc6-dev-$debarch-cross
if [ -z "$glibc_dir" ]; then
    facts=$(dpkg-query -W -f '${Version}\t${source:Package}\t${source:Version}\t${Built-Using}' "$cross" 2>/dev/null) || {
        echo "glibc-notice.sh: $cross is not installed (Debian's cross libc for $target)" >&2
        exit 2
    }
    IFS=$'\t' read -r cross_version cross_source cross_source_version built_using <<<"$facts"
    # Built-Using: "binutils (= 2.40-2), linux (= 6.1.4-1), gcc-12 (= ...), glibc (= 2.36-8)"
    glibc=$(echo "$built_using" | tr ',' '\n' | sed -n 's/^ *glibc (= \(.*\))$/\1/p')
    [ -n "$glibc" ] || {
        echo "glibc-notice.sh: $cross $cross_version names no glibc in its Built-Using: $built_using" >&2
        exit 2
    }
    upstream=${glibc%-*}
    upstream=${upstream#*:}
fi

echo "Binary: vigil-$arch"
echo "Target: $target"
echo "C-Library: glibc, linked statically"
echo "License: LGPL-2.1-or-later"
if [ -n "$glibc_dir" ]; then
    echo "Linked-Against: $glibc_dir/lib (VIGIL_GLIBC_DIR)"
else
    echo "Glibc-Version: $upstream"
    echo "Built-Using: glibc (= $glibc)"
    echo "Linked-From: $cross $cross_version (Debian source package $cross_source $cross_source_version)"
    echo "Source: https://snapshot.debian.org/package/glibc/$glibc/"
    echo "Source-Upstream: https://ftp.gnu.org/gnu/glibc/glibc-$upstream.tar.xz"
fi
echo "Program-Source: https://crates.io/crates/$package/$version (commit $commit)"
echo "Relink: VIGIL_GLIBC_DIR=DIR bash scripts/release.sh $arch"
echo
if [ -n "$glibc_dir" ]; then
    fmt -w 76 <<EOF
vigil-$arch is linked statically with the GNU C Library (glibc) installed in
$glibc_dir, not with Debian's: its source, and this notice's facts about it,
are for whoever built that glibc to give. The rest holds as below.
EOF
    exit 0
fi
fmt -w 76 <<EOF
vigil-$arch ($target) is linked statically with the GNU C Library
(glibc), as tini-static is (docs/install.md says why this target is not
built with musl). glibc is free software under the GNU Lesser General Public License,
version 2.1 or later (LGPL-2.1-or-later: /usr/share/common-licenses/LGPL-2.1
on Debian, https://www.gnu.org/licenses/old-licenses/lgpl-2.1.html). vigil
itself is MIT-licensed; the Rust standard library in it is MIT OR
Apache-2.0; libgcc, also in it, is GPL-3.0-or-later with the GCC Runtime
Library Exception, which puts no condition on the program.

THE GLIBC IN IT

glibc $upstream, as Debian builds it: the libc.a and start files of Debian's
package $cross $cross_version, which Debian's source package
$cross_source $cross_source_version builds from Debian's glibc source
package, version $glibc (the package's Built-Using field says so).

Its source, as Debian keeps every version of it:

    https://snapshot.debian.org/package/glibc/$glibc/

whose page links the source package's three files, glibc_$glibc.dsc,
glibc_$upstream.orig.tar.xz and glibc_$glibc.debian.tar.xz (dget of the
.dsc's address fetches all three and checks them against it);

and upstream, without Debian's patches:

    https://ftp.gnu.org/gnu/glibc/glibc-$upstream.tar.xz

The binary's Debian package, vigil_${version}_$debarch.deb, says the same
in its Built-Using field and its copyright file.

RELINKING AGAINST ANOTHER GLIBC

The LGPL lets you change glibc and use the changed one with vigil. vigil's
complete source is the crate $package $version on crates.io, commit
$commit of its repository, and its release build is reproducible: with the
toolchain dist/RELEASE.md lists ($rustc, cargo-auditable $cargo_auditable_version,
Debian 12's $linker and $cross),

    bash scripts/release.sh $arch

gives this very binary, bit for bit (docs/install.md, "Rebuild and
compare"). To link it against another glibc instead, build that glibc
statically for $target's triplet (${linker%-gcc}), install it in a directory
DIR (DIR/lib holding libc.a, crt1.o, crti.o, crtn.o and glibc's other
archives), and run, in the source tree:

    VIGIL_GLIBC_DIR=DIR bash scripts/release.sh $arch

The linker then takes glibc's start files and archives from DIR/lib first
(-B and -L), and dist/vigil-$arch is vigil linked against your glibc.
EOF
