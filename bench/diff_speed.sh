#!/usr/bin/env bash
# Times `ripple-render diff` on two identical copies of the busy 640×480×300 render
# (bench/busy.toml), as GIFs and as PNG folders: five runs each, the median printed.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/ripple-render
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" bench/busy.toml -o "$tmp/a.gif" -q
cp "$tmp/a.gif" "$tmp/b.gif"
"$bin" bench/busy.toml -o "$tmp/a/" -q
cp -r "$tmp/a" "$tmp/b"
for pair in "a.gif b.gif" "a b"; do
    set -- $pair
    times=()
    for _ in 1 2 3 4 5; do
        start=$(date +%s.%N)
        "$bin" diff "$tmp/$1" "$tmp/$2" --quiet
        times+=("$(echo "$(date +%s.%N) - $start" | bc)")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
    echo "diff $1 $2 (640x480, 300 frames): median ${median} s of 5 runs"
done
