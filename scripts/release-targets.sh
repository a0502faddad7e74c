# shellcheck shell=bash
# The seven release targets, sourced by scripts/release.sh and the scripts
# that package, check and rebuild its output. One row each:
#
#   arch  rust target  qemu-user binary  Debian arch  OCI platform  what `file` says of the machine
#
# `arch` names the binary (dist/vigil-ARCH); the Debian architecture names
# the package (vigil_VERSION_DEBARCH.deb); the OCI platform is the image's.
# musl where rustup serves it, static glibc elsewhere (.cargo/config.toml).
# shellcheck disable=SC2034
release_targets=(
    "x86_64  x86_64-unknown-linux-musl      qemu-x86_64-static  amd64   linux/amd64   x86-64"
    "aarch64 aarch64-unknown-linux-musl     qemu-aarch64-static arm64   linux/arm64   ARM aarch64"
    "i686    i686-unknown-linux-musl        qemu-i386-static    i386    linux/386     Intel 80386"
    "armv7   armv7-unknown-linux-gnueabihf  qemu-arm-static     armhf   linux/arm/v7  ARM, EABI5"
    "riscv64 riscv64gc-unknown-linux-gnu    qemu-riscv64-static riscv64 linux/riscv64 RISC-V"
    "s390x   s390x-unknown-linux-gnu        qemu-s390x-static   s390x   linux/s390x   IBM S/390"
    "ppc64le powerpc64le-unknown-linux-gnu  qemu-ppc64le-static ppc64el linux/ppc64le 64-bit PowerPC"
)

# The row of one arch (x86_64, ..., ppc64le); empty when there is none.
release_target_row() {
    local row a
    for row in "${release_targets[@]}"; do
        read -r a _ <<<"$row"
        if [ "$a" = "$1" ]; then
            echo "$row"
            return 0
        fi
    done
    return 1
}

# The version in Cargo.toml's [package].
release_version() {
    sed -n '/^\[package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml | head -1
}

# The cargo-auditable release.sh builds with, pinned: .ci/run installs this
# version, and a rebuild must use it too (its output is in the binary).
cargo_auditable_version=0.7.7
