#!/usr/bin/env python3
"""Reads the dependency list that `cargo auditable build` embeds in a binary.

The list is the ELF section `.dep-v0`: zlib-compressed JSON of the form

    {"packages": [{"name": "nix", "version": "0.30.1",
                   "source": "crates.io", "kind": "build"?,
                   "dependencies": [INDEX, ...]?, "root": true?}, ...],
     "format": 1}

(`kind` is absent for a runtime dependency and "build" for one that only
ran at build time; `root` marks the binary's own package). trivy, syft and
rust-audit-info read the same section. This reader needs nothing but
Python, so that CI and anyone holding a release binary can check it:

    python3 scripts/audit-info.py dist/vigil-s390x          # the JSON
    python3 scripts/audit-info.py --summary dist/vigil-*    # one line each

Exits 1 when a file is not an ELF binary or carries no `.dep-v0` section.
"""

import json
import struct
import sys
import zlib

SECTION = b".dep-v0"


def sections(data):
    """(name, offset, size, flags) of each section of an ELF file's bytes."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    bits = {1: 32, 2: 64}.get(data[4])
    order = {1: "<", 2: ">"}.get(data[5])
    if bits is None or order is None:
        raise ValueError("unknown ELF class or byte order")
    if bits == 64:
        shoff = struct.unpack_from(order + "Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x3A)
        header = order + "IIQQQQ"
    else:
        shoff = struct.unpack_from(order + "I", data, 0x20)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x2E)
        header = order + "IIIIII"
    rows = []
    for i in range(shnum):
        name, _type, flags, _addr, offset, size = struct.unpack_from(header, data, shoff + i * shentsize)
        rows.append((name, offset, size, flags))
    _, names_at, names_size, _ = rows[shstrndx]
    names = data[names_at : names_at + names_size]
    for name, offset, size, flags in rows:
        end = names.index(b"\0", name)
        yield names[name:end], offset, size, flags


def audit_data(path):
    """The decoded dependency list of the binary at PATH, and the section's size."""
    with open(path, "rb") as f:
        data = f.read()
    for name, offset, size, _ in sections(data):
        if name == SECTION:
            return json.loads(zlib.decompress(data[offset : offset + size])), size
    raise ValueError(f"no {SECTION.decode()} section")


def summary(info):
    """`vigil-init 0.1.0; runtime: a 1.0, ...; build: b 2.0`."""
    root = [p for p in info["packages"] if p.get("root")]
    runtime = [p for p in info["packages"] if not p.get("root") and p.get("kind", "runtime") == "runtime"]
    build = [p for p in info["packages"] if p.get("kind") == "build"]
    show = lambda ps: ", ".join(f"{p['name']} {p['version']}" for p in ps) or "none"
    return f"{show(root)}; runtime: {show(runtime)}; build: {show(build)}"


def main(argv):
    brief = "--summary" in argv
    paths = [a for a in argv if a != "--summary"]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        try:
            info, size = audit_data(path)
        except (OSError, ValueError, zlib.error, struct.error, IndexError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            status = 1
            continue
        if brief:
            print(f"{path}: {SECTION.decode()} {size} bytes: {summary(info)}")
        else:
            print(json.dumps(info, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
