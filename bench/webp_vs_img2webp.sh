#!/bin/bash
# Our animated WebP against `img2webp -lossless` (Debian package webp) on the same frames, one
# scene per line: sizes, their ratio, and each side's wall time (one run each; img2webp's is
# cached with its frames in $CACHE, so rerunning after a change of ours times only ours).
#
# Usage: bench/webp_vs_img2webp.sh [SCENE ...]   (default: scenes/*.toml tests/golden/scenes/*.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/ripple-render
CACHE=${CACHE:-/tmp/ripple-webp-bench}
[ $# -gt 0 ] || set -- scenes/*.toml tests/golden/scenes/*.toml
now() { date +%s.%N; }
for scene in "$@"; do
  dir=$CACHE/$(echo "$scene" | tr '/' '_' | sed 's/\.toml$//')
  if [ ! -f "$dir/theirs.webp" ]; then
    rm -rf "$dir" && mkdir -p "$dir/frames"
    "$BIN" "$scene" -o "$dir/frames/" -f -q 2>/dev/null
    fps=$("$BIN" plan "$scene" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["fps"])')
    delay=$(python3 -c "print(round(1000 / $fps))")
    t0=$(now)
    img2webp -lossless -loop 0 -d "$delay" "$dir"/frames/frame_*.png -o "$dir/theirs.webp" >/dev/null 2>&1
    echo "$(now) - $t0" | bc > "$dir/theirs.time"
  fi
  t0=$(now)
  "$BIN" "$scene" -o "$dir/ours.webp" -f -q 2>/dev/null
  ours_time=$(echo "$(now) - $t0" | bc)
  python3 - "$scene" "$dir" "$ours_time" <<'PY'
import os, sys
scene, d, t = sys.argv[1], sys.argv[2], float(sys.argv[3])
o, th = os.path.getsize(f"{d}/ours.webp"), os.path.getsize(f"{d}/theirs.webp")
tt = float(open(f"{d}/theirs.time").read())
print(f"{scene}: size {o} / {th} B ({o / th:.3f}), time {t:.2f} / {tt:.2f} s (img2webp / ours {tt / t:.1f})")
PY
done
