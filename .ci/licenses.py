#!/usr/bin/env python3
"""Licence check: every crate in the resolved dependency graph (normal, build and dev) must be
usable under a licence on the allow-list. SPDX expressions are evaluated: `A OR B` needs one
allowed side, `A AND B` both; `/` is the old spelling of OR. Copyleft licences (GPL, AGPL,
LGPL) are never on the list, so a crate offered only under one of them fails the build.

Usage: .ci/licenses.py            (reads `cargo metadata`; exit 1 on any refusal)
       .ci/licenses.py --self-test
"""

import json
import re
import subprocess
import sys

ALLOWED = {
    "MIT",
    "MIT-0",
    "Apache-2.0",
    "Apache-2.0 WITH LLVM-exception",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "0BSD",
    "ISC",
    "Zlib",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "Unlicense",
    "BSL-1.0",
    "CC0-1.0",
}
COPYLEFT = re.compile(r"\b(A?GPL|LGPL)", re.IGNORECASE)


def tokens(expression):
    return re.findall(r"\(|\)|[^\s()]+", expression.replace("/", " OR "))


def allowed(expression):
    """Whether an SPDX expression can be satisfied with allowed licences only."""
    items = tokens(expression)
    position = 0

    def peek():
        return items[position] if position < len(items) else None

    def take():
        nonlocal position
        position += 1
        return items[position - 1]

    def primary():
        if peek() == "(":
            take()
            value = disjunction()
            if take() != ")":
                raise ValueError(f"unbalanced parentheses in {expression!r}")
            return value
        name = take()
        if peek() == "WITH":
            take()
            name = f"{name} WITH {take()}"
        return name in ALLOWED and not COPYLEFT.search(name)

    def conjunction():
        value = primary()
        while peek() == "AND":
            take()
            value = primary() and value
        return value

    def disjunction():
        value = conjunction()
        while peek() == "OR":
            take()
            value = conjunction() or value
        return value

    result = disjunction()
    if peek() is not None:
        raise ValueError(f"cannot read {expression!r}")
    return result


def self_test():
    cases = {
        "MIT": True,
        "MIT OR Apache-2.0": True,
        "MIT/Apache-2.0": True,
        "(MIT OR Apache-2.0) AND Unicode-3.0": True,
        "Apache-2.0 WITH LLVM-exception OR Apache-2.0 OR MIT": True,
        "MIT OR Apache-2.0 OR LGPL-2.1-or-later": True,
        "GPL-3.0-only": False,
        "AGPL-3.0-or-later OR GPL-2.0": False,
        "MIT AND GPL-2.0-only": False,
        "LGPL-2.1-or-later": False,
        "Proprietary": False,
        "(MIT AND (Zlib OR GPL-3.0))": True,
    }
    for expression, expected in cases.items():
        assert allowed(expression) == expected, expression
    print(f"licence checker self-test: {len(cases)} expressions ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    self_test()
    refused = []
    # The program, the web player's and the Python package's crates: three lock files.
    for manifest in ["Cargo.toml", "web/Cargo.toml", "python/Cargo.toml"]:
        refused += check(manifest)
    if refused:
        print("licence check failed:", file=sys.stderr)
        for line in refused:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


def check(manifest):
    """What the crates of `manifest`'s graph break of the rules, printing what was checked."""
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked", "--manifest-path", manifest],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    resolved = {node["id"] for node in metadata["resolve"]["nodes"]}
    refused = []
    checked = 0
    for package in metadata["packages"]:
        # Our own crates (path dependencies) are not third-party code.
        if package["id"] not in resolved or package["source"] is None:
            continue
        checked += 1
        licence = package.get("license")
        if not licence:
            refused.append(f"{package['name']} {package['version']}: no SPDX licence expression")
        elif not allowed(licence):
            refused.append(f"{package['name']} {package['version']}: {licence}")
    # The image crate carries only the decoders SPEC §2 names.
    image_features = {
        feature
        for node in metadata["resolve"]["nodes"]
        if node["id"].split("#")[-1].startswith("image@")
        for feature in node["features"]
    }
    extra = image_features - {"png", "jpeg", "gif", "bmp", "webp"}
    if extra:
        refused.append(f"{manifest}: image: features beyond the decoders needed: {', '.join(sorted(extra))}")
    decoders = ", ".join(sorted(image_features)) or "none"
    print(f"licence check, {manifest}: {checked} crates, all under allowed licences; image decoders: {decoders}")
    return [f"{manifest}: {line}" if not line.startswith(manifest) else line for line in refused]


if __name__ == "__main__":
    sys.exit(main())
