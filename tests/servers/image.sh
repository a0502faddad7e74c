#!/usr/bin/env bash
# The Debian image that tests/servers.rs runs real servers in (postgres,
# nginx, redis, gunicorn, bash), made from this machine's configured apt
# sources, since no image can be pulled. Prints the image's name on stdout;
# progress goes to stderr.
#
#     bash tests/servers/image.sh            # as root; docker must answer
#
# Two steps, each cached, so that a warm run rebuilds nothing:
#
# 1. a root filesystem made by `mmdebstrap --variant=minbase` with the
#    packages below, as a tarball in $VIGIL_SERVERS_CACHE (default
#    /var/cache/vigil-servers), named by a key over the suite, the package
#    list and mmdebstrap's options: a change of any makes a new one, and
#    the old one is removed;
# 2. `docker import` of it, then `docker build` of tests/servers/Dockerfile
#    on top (the WSGI app and the configs, initdb, the nginx download file),
#    tagged vigil-servers:KEY, KEY covering the tarball's key and every file
#    of tests/servers/. That image is kept in the engine between runs (label
#    vigil-e2e-cache=servers); older tags of it are removed when a new one
#    is built. The label is not `vigil-e2e`, so the tests' clean-up of their
#    own run leaves it alone.
#
# The image has no vigil: the tests add the build under test in a layer of
# their own, once per run (tests/common/servers.rs).
#
# To start from scratch:
#
#     docker image ls -q --filter label=vigil-e2e-cache=servers | sort -u |
#         xargs -r docker image rm -f
#     rm -rf /var/cache/vigil-servers
set -euo pipefail

# All in one function, read whole before it runs: a script edited while it
# runs would otherwise go on from the same offset of the new text.
main() {
    local here cache engine label suite packages options key tarball
    here=$(cd "$(dirname "$0")" && pwd)
    cache=${VIGIL_SERVERS_CACHE:-/var/cache/vigil-servers}
    engine=${VIGIL_SERVERS_ENGINE:-docker}
    label=vigil-e2e-cache=servers

    # The suite is the host's own release (its apt sources name it), else
    # Debian 12.
    suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    suite=${suite:-bookworm}
    # The servers, what the tests drive them with (psql and redis-cli come
    # with their servers), and the tools the tests and recipes use: ps
    # (procps), tini and gosu to run the servers as images do without vigil.
    packages=(postgresql nginx-light redis-server gunicorn haproxy bash procps tini gosu)

    mkdir -p "$cache"
    exec 9>"$cache/lock"
    flock 9

    # Step 1: the root filesystem. No documentation, manual pages or
    # translations: a smaller tarball imports faster. Debian's postgresql
    # package makes a cluster at install time; the image makes its own
    # with initdb instead.
    options=(--variant=minbase --include="$(IFS=,; echo "${packages[*]}")"
        --dpkgopt='path-exclude=/usr/share/doc/*'
        --dpkgopt='path-exclude=/usr/share/man/*'
        --dpkgopt='path-exclude=/usr/share/info/*'
        --dpkgopt='path-exclude=/usr/share/locale/*'
        --customize-hook='chroot "$1" sh -c "pg_lsclusters -h | while read -r v c _; do pg_dropcluster \$v \$c; done"')
    key=$(printf '%s\n' "$suite" "${options[@]}" | sha256sum | cut -c1-16)
    tarball="$cache/rootfs-$suite-$key.tar"
    if [ -s "$tarball" ]; then
        echo "servers: root filesystem $tarball (cached)" >&2
    else
        make_rootfs
    fi

    # Step 2: the image.
    local ikey image rootfs old out started=$SECONDS
    ikey=$( { echo "$tarball"; cd "$here" && find . -type f | LC_ALL=C sort |
        xargs sha256sum; } | sha256sum | cut -c1-16)
    image="vigil-servers:$ikey"
    if "$engine" image inspect "$image" >/dev/null 2>&1; then
        echo "servers: image $image (cached)" >&2
        echo "$image"
        return
    fi
    # Older versions, by their tags only: images built on them (a run's
    # vigil layer) inherit the label, and one of another test run may be in
    # use.
    for old in $("$engine" image ls --format '{{.Repository}}:{{.Tag}}' vigil-servers) \
        $("$engine" image ls --format '{{.Repository}}:{{.Tag}}' vigil-servers-rootfs); do
        "$engine" image rm "$old" >/dev/null 2>&1 || true
    done
    rootfs="vigil-servers-rootfs:$ikey"
    "$engine" import --change "LABEL $label" "$tarball" "$rootfs" >/dev/null
    if ! out=$("$engine" build -q --build-arg "ROOTFS=$rootfs" -t "$image" "$here" 2>&1); then
        echo "servers: $engine build of $here failed:" >&2
        echo "$out" >&2
        "$engine" image rm "$rootfs" >/dev/null 2>&1 || true
        exit 1
    fi
    # The import's own tag: the built image keeps its layer.
    "$engine" image rm "$rootfs" >/dev/null 2>&1 || true
    echo "servers: image $image built in $((SECONDS - started))s" >&2
    echo "$image"
}

# mmdebstrap SUITE from this machine's own apt sources into $tarball.
make_rootfs() {
    local f sources=() started=$SECONDS
    if ! command -v mmdebstrap >/dev/null; then
        # Status 2: this machine cannot make the image (the tests skip).
        echo "servers: mmdebstrap is missing (Debian package mmdebstrap)" >&2
        exit 2
    fi
    # This machine may reach only its configured mirror. A file is taken
    # when an entry names the suite (one-line `deb URI SUITE ...` or deb822
    # `Suites: SUITE ...`).
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        if grep -Eq "^[[:space:]]*(Suites:|deb[[:space:]]).*[[:space:]]$suite([[:space:]]|$)" "$f"; then
            sources+=("$f")
        fi
    done
    if [ "${#sources[@]}" -eq 0 ]; then
        echo "servers: no apt source of this machine names $suite:" \
            "mmdebstrap's default mirror then" >&2
    fi
    echo "servers: mmdebstrap $suite (${packages[*]})" \
        "from ${sources[*]:-deb.debian.org}" >&2
    rm -f "$cache"/rootfs-*.tar "$cache"/rootfs-*.tar.part
    mmdebstrap --quiet "${options[@]}" --format=tar "$suite" "$tarball.part" \
        "${sources[@]}" >&2
    mv "$tarball.part" "$tarball"
    echo "servers: root filesystem made in $((SECONDS - started))s:" \
        "$tarball ($(du -m "$tarball" | cut -f1) MiB)" >&2
}

main "$@"
