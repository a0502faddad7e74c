#!/usr/bin/env bash
# Builds vigil's release binaries for seven architectures into dist/:
#
#   dist/vigil-x86_64    x86_64-unknown-linux-musl       static-pie, musl
#   dist/vigil-aarch64   aarch64-unknown-linux-musl      static-pie, musl
#   dist/vigil-i686      i686-unknown-linux-musl         static-pie, musl
#   dist/vigil-armv7     armv7-unknown-linux-gnueabihf   static, glibc (crt-static)
#   dist/vigil-riscv64   riscv64gc-unknown-linux-gnu     static, glibc (crt-static)
#   dist/vigil-s390x     s390x-unknown-linux-gnu         static, glibc (crt-static)
#   dist/vigil-ppc64le   powerpc64le-unknown-linux-gnu   static, glibc (crt-static)
#   dist/vigil.1         the man page
#   dist/SHA256SUMS      `sha256sum -c SHA256SUMS` checks them
#
# musl where rustup serves it, static glibc elsewhere (vigil uses no NSS, so
# a static glibc binary is complete, as tini-static is). Each binary is the
# release profile (size-tuned, stripped) and is checked to be a static ELF
# for its machine whose `--version` names the commit and the target.
#
#   bash scripts/release.sh                  # all seven
#   bash scripts/release.sh x86_64 aarch64   # some
#
# Needs the rustup targets and Debian's cross linkers (.ci/run installs
# them: gcc-aarch64-linux-gnu gcc-i686-linux-gnu gcc-arm-linux-gnueabihf
# gcc-riscv64-linux-gnu gcc-s390x-linux-gnu gcc-powerpc64le-linux-gnu) and
# qemu-user-static, through which `--version` of each foreign binary is
# read.
set -euo pipefail
cd "$(dirname "$0")/.."

# arch, rust target, qemu-user binary, what `file` says of the machine
all=(
    "x86_64  x86_64-unknown-linux-musl      qemu-x86_64-static  x86-64"
    "aarch64 aarch64-unknown-linux-musl     qemu-aarch64-static ARM aarch64"
    "i686    i686-unknown-linux-musl        qemu-i386-static    Intel 80386"
    "armv7   armv7-unknown-linux-gnueabihf  qemu-arm-static     ARM, EABI5"
    "riscv64 riscv64gc-unknown-linux-gnu    qemu-riscv64-static RISC-V"
    "s390x   s390x-unknown-linux-gnu        qemu-s390x-static   IBM S/390"
    "ppc64le powerpc64le-unknown-linux-gnu  qemu-ppc64le-static 64-bit PowerPC"
)
wanted=("$@")
selected=()
for row in "${all[@]}"; do
    read -r arch _ <<<"$row"
    if [ "${#wanted[@]}" -eq 0 ] || printf '%s\n' "${wanted[@]}" | grep -qx "$arch"; then
        selected+=("$row")
    fi
done
if [ "${#selected[@]}" -eq 0 ]; then
    echo "release.sh: no such architecture: $* (have: x86_64 aarch64 i686 armv7 riscv64 s390x ppc64le)" >&2
    exit 2
fi

# The commit the binaries say they were built from; "-modified" when
# tracked files differ from it.
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- 2>/dev/null; then
    commit="$commit-modified"
fi
export VIGIL_COMMIT="$commit"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

rm -rf dist
mkdir -p dist
problems=0
for row in "${selected[@]}"; do
    read -r arch target qemu machine <<<"$row"
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
    echo "== $arch: cargo build --release --locked --target $target"
    cargo build --quiet --release --locked --target "$target"
    bin="dist/vigil-$arch"
    cp "target/$target/release/vigil" "$bin"
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
done
cp docs/vigil.1 dist/vigil.1
(cd dist && sha256sum vigil-* vigil.1 >SHA256SUMS)

echo "== dist/ (vigil $version, commit $commit)"
for f in dist/vigil-* dist/vigil.1; do
    printf '%-18s %9s bytes  %s\n' "$f" "$(stat -c %s "$f")" "$(file -b "$f" | cut -d, -f1-2)"
done
echo "== dist/SHA256SUMS"
cat dist/SHA256SUMS

# The README's table of the release binaries is this build's, written here
# so that its sizes cannot drift from what the release command makes (only
# after a build of them all).
if [ "${#selected[@]}" -eq "${#all[@]}" ] && [ "$problems" -eq 0 ]; then
    sizes=()
    for row in "${all[@]}"; do
        read -r arch target _ <<<"$row"
        sizes+=("$arch $target $(stat -c %s "dist/vigil-$arch")")
    done
    python3 - "$(rustc --version | cut -d' ' -f2)" "$commit" "${sizes[@]}" <<'PY'
import sys
rust, commit, rows = sys.argv[1], sys.argv[2], sys.argv[3:]
lines = ["| file | target | C library | size |", "|---|---|---|---|"]
for row in rows:
    arch, target, size = row.split()
    libc = "musl (static, non-PIE)" if "musl" in target else "glibc, static"
    size = int(size)
    lines.append(f"| `vigil-{arch}` | `{target}` | {libc} | {size:,} bytes ({size // 1024:,} KiB) |")
lines += ["", f"(Written by `scripts/release.sh`: Rust {rust}, the release profile of CONTRIBUTING.md, commit {commit}.)"]
begin, end = "<!-- BEGIN RELEASE TABLE -->", "<!-- END RELEASE TABLE -->"
text = open("README.md").read()
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    table = "\n".join(lines)
    open("README.md", "w").write(f"{head}{begin}\n{table}\n{end}{tail}")
PY
    echo "== README.md: the release table is this build's"
fi
if [ "$problems" -gt 0 ]; then
    echo "release.sh: $problems problem(s)" >&2
    exit 1
fi
