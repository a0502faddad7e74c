# The vigil image: FROM scratch, holding only /vigil, made from the static
# binaries in dist/ (scripts/release.sh) without any registry or network.
# Other images take vigil from it:
#
#   bash scripts/release.sh                 # dist/vigil-x86_64 ... dist/vigil-ppc64le
#   docker build -t vigil .                 # this machine's architecture (amd64 by default)
#   docker build -t vigil --build-arg TARGETARCH=arm64 .   # another one
#
#   # in your Dockerfile:
#   COPY --from=vigil /vigil /vigil
#   ENTRYPOINT ["/vigil", "--"]
#
# TARGETARCH uses Docker's names: amd64, arm64, 386, arm (armv7), riscv64,
# s390x, ppc64le. BuildKit (`docker buildx build --platform linux/arm64`) sets it by
# itself; the classic builder takes it from --build-arg and, since it builds
# every stage, needs all seven binaries in dist/ (release.sh with no argument).
# The image carries no shell and no libc: `docker run --rm vigil --version`.
ARG TARGETARCH=amd64

FROM scratch AS vigil-amd64
COPY dist/vigil-x86_64 /vigil

FROM scratch AS vigil-arm64
COPY dist/vigil-aarch64 /vigil

FROM scratch AS vigil-386
COPY dist/vigil-i686 /vigil

FROM scratch AS vigil-arm
COPY dist/vigil-armv7 /vigil

FROM scratch AS vigil-riscv64
COPY dist/vigil-riscv64 /vigil

FROM scratch AS vigil-s390x
COPY dist/vigil-s390x /vigil

FROM scratch AS vigil-ppc64le
COPY dist/vigil-ppc64le /vigil

FROM vigil-${TARGETARCH}
ENTRYPOINT ["/vigil"]
