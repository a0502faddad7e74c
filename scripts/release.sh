#!/usr/bin/env bash
# Builds a vigil release into dist/:
#
#   dist/vigil-x86_64    x86_64-unknown-linux-musl       static, musl
#   dist/vigil-aarch64   aarch64-unknown-linux-musl      static, musl
#   dist/vigil-i686      i686-unknown-linux-musl         static, musl
#   dist/vigil-armv7     armv7-unknown-linux-gnueabihf   static, glibc (crt-static)
#   dist/vigil-riscv64   riscv64gc-unknown-linux-gnu     static, glibc (crt-static)
#   dist/vigil-s390x     s390x-unknown-linux-gnu         static, glibc (crt-static)
#   dist/vigil-ppc64le   powerpc64le-unknown-linux-gnu   static, glibc (crt-static)
#   dist/vigil.1                          the man page
#   dist/vigil_VERSION_ARCH.glibc.txt     for each static glibc binary, what the
#                                         LGPL asks: glibc's version, its source,
#                                         and how to relink (scripts/glibc-notice.sh)
#   dist/vigil_VERSION_DEBARCH.deb        a Debian package per binary (scripts/deb.sh)
#   dist/vigil_VERSION.cdx.json           the CycloneDX SBOM (scripts/sbom.py)
#   dist/vigil_VERSION.oci.tar            the multi-arch image, an OCI archive (scripts/image.sh)
#   dist/RELEASE.md                       what was built, from what, with what
#   dist/SHA256SUMS                       `sha256sum -c SHA256SUMS` checks all of the above
#
# musl where rustup serves it, static glibc elsewhere (vigil uses no NSS, so
# a static glibc binary is complete, as tini-static is). Each binary is the
# release profile (size-tuned, stripped), built by `cargo auditable build`,
# which embeds the dependency list (section .dep-v0, read by trivy, syft,
# rust-audit-info and scripts/audit-info.py), and is checked to be a static
# ELF for its machine whose `--version` names the commit and the target.
#
# Reproducible: the same commit, toolchain and Debian linkers give the same
# bytes, whoever builds it, wherever, whenever (scripts/reproduce.sh checks
# it; docs/install.md says how to rebuild a release and compare).
# SOURCE_DATE_EPOCH is the commit's time; the source directory, the cargo
# home and the toolchain's directory are remapped to fixed names; the
# variables that would change the build (RUSTFLAGS and the like) are unset.
#
#   bash scripts/release.sh                  # all seven, and the image
#   bash scripts/release.sh x86_64 aarch64   # some (no image)
#   VIGIL_GLIBC_DIR=DIR bash scripts/release.sh armv7
#                                            # relinked against the glibc in
#                                            # DIR/lib (libc.a, crt1.o, ...)
#
# Needs the rustup targets, cargo-auditable (the version in
# scripts/release-targets.sh), Debian's cross linkers (.ci/run installs
# them: gcc-aarch64-linux-gnu gcc-i686-linux-gnu gcc-arm-linux-gnueabihf
# gcc-riscv64-linux-gnu gcc-s390x-linux-gnu gcc-powerpc64le-linux-gnu),
# qemu-user-static, through which `--version` of each foreign binary is
# read, dpkg-deb, and for the image buildah.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-targets.sh
src=$PWD

wanted=("$@")
selected=()
for row in "${release_targets[@]}"; do
    read -r arch _ <<<"$row"
    if [ "${#wanted[@]}" -eq 0 ] || printf '%s\n' "${wanted[@]}" | grep -qx "$arch"; then
        selected+=("$row")
    fi
done
if [ "${#selected[@]}" -eq 0 ]; then
    echo "release.sh: no such architecture: $* (have: x86_64 aarch64 i686 armv7 riscv64 s390x ppc64le)" >&2
    exit 2
fi
everything=false
[ "${#selected[@]}" -eq "${#release_targets[@]}" ] && everything=true

# Relinking against another glibc (the LGPL's right; dist/vigil_VERSION_ARCH.glibc.txt):
# a static glibc built for the target, installed in VIGIL_GLIBC_DIR, whose
# lib/ the linker searches first, for the start files (-B) and the archives
# (-L). It applies to the static glibc targets of this run.
glibc_dir=${VIGIL_GLIBC_DIR:-}
if [ -n "$glibc_dir" ]; then
    glibc_dir=$(cd "$glibc_dir" && pwd) || exit 2
    for f in libc.a crt1.o crti.o crtn.o; do
        [ -f "$glibc_dir/lib/$f" ] || {
            echo "release.sh: VIGIL_GLIBC_DIR=$glibc_dir has no lib/$f" >&2
            exit 2
        }
    done
fi

# Only the repository's own settings shape the binaries: a RUSTFLAGS or a
# profile override from the caller's environment would change them (and
# RUSTFLAGS would drop .cargo/config.toml's flags).
while read -r name; do
    case "$name" in
        CARGO_HOME | RUSTUP_HOME | RUSTUP_TOOLCHAIN | CARGO_TARGET_DIR | CARGO_NET_OFFLINE) ;;
        *) unset "$name" ;;
    esac
done < <(compgen -e | grep -E '^(CARGO|RUST)' || true)

# The commit the binaries say they were built from; "-modified" when
# tracked files differ from it. Its time is SOURCE_DATE_EPOCH, the one
# date that goes into the packages, the SBOM and the image.
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ]; then
    export SOURCE_DATE_EPOCH
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
    full_commit=$(git rev-parse HEAD)
    if ! git diff --quiet HEAD --; then
        commit="$commit-modified"
        full_commit="$full_commit-modified"
    fi
elif [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    echo "release.sh: no git commit here: set SOURCE_DATE_EPOCH" >&2
    exit 2
else
    full_commit=unknown
fi
export VIGIL_COMMIT="$commit"
version=$(release_version)

if ! command -v cargo-auditable >/dev/null; then
    echo "release.sh: cargo-auditable is missing: cargo install --locked cargo-auditable --version $cargo_auditable_version" >&2
    exit 2
fi
# It has no --version of its own; cargo's list of what it installed says.
auditable=$(cargo install --list | sed -n 's/^\(cargo-auditable v.*\):$/\1/p')
if [ "$auditable" != "cargo-auditable v$cargo_auditable_version" ]; then
    echo "release.sh: warning: ${auditable:-cargo-auditable of unknown version}, not v$cargo_auditable_version as the release is built with" >&2
fi
# Every crate the lock file names, so that what follows can run offline.
cargo fetch --locked --quiet
target_dir=$(cargo metadata --no-deps --format-version 1 --offline |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
sysroot=$(rustc --print sysroot)
cargo_home=${CARGO_HOME:-$HOME/.cargo}
cargo_home=$(cd "$cargo_home" 2>/dev/null && pwd || echo "$cargo_home")

# Paths rustc would otherwise write into the binary (panic locations name
# source files): each prefix becomes a fixed name; where one lies inside
# another, the longer is given last, as the last match wins.
remap=$(printf '%s\n' "$src=/vigil" "$cargo_home=/cargo" "$sysroot=/rust" |
    awk -F= '{print length($1) "\t" $0}' | sort -n | cut -f2- |
    sed 's/.*/"--remap-path-prefix=&"/' | paste -sd, -)

# cargo-auditable makes itself cargo's workspace wrapper by its absolute
# path, and cargo hashes that path into the package's metadata, so into its
# symbol names and the order of the code: a builder with the tool elsewhere
# would get other bytes. cargo-auditable runs this cargo instead, which
# names the wrapper by its name, found on PATH, the same for everyone.
tools=$(mktemp -d /tmp/vigil-release.XXXXXX)
trap 'rm -rf "$tools"' EXIT
cat >"$tools/cargo" <<EOF
#!/bin/sh
RUSTC_WORKSPACE_WRAPPER=cargo-auditable exec $(printf %q "$(command -v cargo)") "\$@"
EOF
chmod +x "$tools/cargo"

rm -rf dist
mkdir -p dist
# One cargo for all the targets: it builds them side by side (each one's
# last step, the link-time optimisation, takes one core).
build=()
for row in "${selected[@]}"; do
    read -r _ target _ <<<"$row"
    [ -d "$sysroot/lib/rustlib/$target" ] || rustup target add "$target"
    # A --config array joins the ones .cargo/config.toml gives the target.
    flags=$remap
    if [ -n "$glibc_dir" ] && [[ "$target" != *-musl ]]; then
        flags="$flags,\"-Clink-arg=-B$glibc_dir/lib\",\"-Clink-arg=-L$glibc_dir/lib\""
    fi
    build+=(--target "$target" --config "target.$target.rustflags=[$flags]")
done
echo "== cargo auditable build --release --locked, for ${#selected[@]} target(s)"
CARGO="$tools/cargo" cargo-auditable auditable build --quiet --release --locked "${build[@]}"
problems=0
for row in "${selected[@]}"; do
    read -r arch target qemu _ _ machine <<<"$row"
    bin="dist/vigil-$arch"
    cp "$target_dir/$target/release/vigil" "$bin"
    desc=$(file -b "$bin")
    case "$desc" in
        *"$machine"*statically\ linked* | *"$machine"*static-pie\ linked*) ;;
        *)
            echo "release.sh: $bin is not a static $machine executable: $desc" >&2
            problems=$((problems + 1))
            ;;
    esac
    case "$desc" in *"not stripped"*)
        echo "release.sh: $bin is not stripped" >&2
        problems=$((problems + 1))
        ;;
    esac
    run=("$bin")
    [ "$arch" = "$(uname -m)" ] || run=("$qemu" "$bin")
    want="vigil version $version
commit $commit, built for $target"
    got=$("${run[@]}" --version 2>&1 || true)
    if [ "$got" != "$want" ]; then
        echo "release.sh: $bin --version says:" >&2
        echo "$got" >&2
        echo "expected:" >&2
        echo "$want" >&2
        problems=$((problems + 1))
    fi
    if ! python3 scripts/audit-info.py --summary "$bin"; then
        echo "release.sh: $bin carries no dependency list" >&2
        problems=$((problems + 1))
    fi
done
install -m 0644 docs/vigil.1 dist/vigil.1

# What the LGPL asks of a program linked statically with glibc, next to each
# such binary (docs/install.md, "The static glibc binaries and the LGPL").
for row in "${selected[@]}"; do
    read -r arch target _ debarch _ <<<"$row"
    [[ "$target" == *-musl ]] && continue
    if ! bash scripts/glibc-notice.sh "$arch" "$commit" "$glibc_dir" >"dist/vigil_${version}_$arch.glibc.txt"; then
        echo "release.sh: no glibc notice for vigil-$arch" >&2
        problems=$((problems + 1))
    fi
done

# The SBOM covers all seven targets whatever was built, so that a partial
# rebuild writes the same one.
all_targets=()
for row in "${release_targets[@]}"; do
    read -r _ target _ <<<"$row"
    all_targets+=("$target")
done
python3 scripts/sbom.py "${all_targets[@]}" >"dist/vigil_$version.cdx.json"

for row in "${selected[@]}"; do
    read -r arch _ <<<"$row"
    bash scripts/deb.sh "$arch" >/dev/null
done
if $everything; then
    bash scripts/image.sh
fi

commas() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }

# The release table: this build's files, their sizes and hashes, and what
# made them, for the notes of the release (the docs point here rather than
# carry figures that drift).
{
    echo "# vigil $version"
    echo
    echo "Commit \`$full_commit\`, SOURCE_DATE_EPOCH $SOURCE_DATE_EPOCH ($(date -u -d "@$SOURCE_DATE_EPOCH" '+%Y-%m-%d %H:%M:%S UTC'))."
    echo
    echo "| target | file | size | sha256 |"
    echo "|---|---|---|---|"
    for row in "${selected[@]}"; do
        read -r arch target _ <<<"$row"
        f=dist/vigil-$arch
        printf '| `%s` | `%s` | %s bytes | `%s` |\n' "$target" "${f#dist/}" \
            "$(commas "$(stat -c %s "$f")")" "$(sha256sum "$f" | cut -d' ' -f1)"
    done
    echo
    echo "| file | size | sha256 |"
    echo "|---|---|---|"
    for f in $(find dist -maxdepth 1 -name 'vigil_*' | LC_ALL=C sort); do
        printf '| `%s` | %s bytes | `%s` |\n' "${f#dist/}" \
            "$(commas "$(stat -c %s "$f")")" "$(sha256sum "$f" | cut -d' ' -f1)"
    done
    if [ -f "dist/vigil_$version.oci.tar" ]; then
        echo
        echo "The image's index (manifest list): \`$(python3 -c '
import json, sys, tarfile
print(json.load(tarfile.open(sys.argv[1]).extractfile("index.json"))["manifests"][0]["digest"])' "dist/vigil_$version.oci.tar")\`."
    fi
    echo
    if [ -n "$glibc_dir" ]; then
        echo "The static glibc binaries are linked against the glibc in \`$glibc_dir\` (VIGIL_GLIBC_DIR), not Debian's."
        echo
    fi
    echo "Built with (a rebuild needs the same; docs/install.md, \"Rebuild and compare\"):"
    echo
    echo '```'
    rustc -vV
    cargo --version
    echo "${auditable:-cargo-auditable (unknown version)}"
    dpkg-query -W -f '${Package} ${Version}\n' binutils gcc libc6-dev 'gcc-*-linux-gnu*' 'binutils-*-linux-gnu*' 'libc6-dev-*-cross' 2>/dev/null |
        grep -v ' $' | LC_ALL=C sort
    echo '```'
} >dist/RELEASE.md

# In byte order, whatever the caller's locale.
(cd dist && find . -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >"$tools/SHA256SUMS")
mv "$tools/SHA256SUMS" dist/SHA256SUMS

echo "== dist/ (vigil $version, commit $commit)"
for f in $(find dist -maxdepth 1 -type f | LC_ALL=C sort); do
    printf '%-34s %9s bytes\n' "$f" "$(stat -c %s "$f")"
done
echo "== dist/SHA256SUMS"
cat dist/SHA256SUMS
if [ "$problems" -gt 0 ]; then
    echo "release.sh: $problems problem(s)" >&2
    exit 1
fi
