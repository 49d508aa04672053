#!/usr/bin/env bash
# tools/same_bytes.sh OLD NEW: renders a matrix of scenes with two builds of ripple-render and
# compares every output byte for byte: every bundled, golden and bench scene, and scenes with
# walls, wrapped and absorbing edges, a mask, spring water in step mode and a seamless loop, in
# GIF, APNG, WebP, a still, PNG folders (RGB and indexed), dithered GIF, manifests, standard
# output, --effort fast and max, lossy WebP (--quality) and GIF (--lossy), --frames parts joined,
# check's blessed references and reports, serve's frames, --max-size ladders, plan (text, events, JSON, walls), diff (text, JSON, reports),
# new, and about thirty refused inputs (stdout, stderr and exit codes; times in messages are
# masked). For a change that must not change behaviour: exit 0 when every byte is the same.
#
#   cargo build --release && cp target/release/ripple-render /tmp/old/ripple-render
#   (change the code) && cargo build --release
#   tools/same_bytes.sh /tmp/old/ripple-render target/release/ripple-render
#
# Both binaries should be named ripple-render (usage lines print the program's name).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
new=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
matrix() {
BIN=$1; OUT=$2; ROOT=$3
rm -rf "$OUT"; mkdir -p "$OUT"
cd "$OUT" || exit 2
cp -r $ROOT/scenes scenes; cp -r $ROOT/tests/golden/scenes golden; cp $ROOT/bench/*.toml golden/ 2>/dev/null; cp $ROOT/bench/photo.png golden/ 
mkdir -p extra
cat > extra/walls.toml <<'T'
[video]
width = 96
height = 64
frames = 30
[background]
pattern = "tiles"
[[obstacle]]
shape = "circle"
x = 40
y = 30
radius = 8
[[obstacle]]
shape = "polygon"
points = [[60, 10], [80, 20], [70, 50]]
[[obstacle]]
shape = "line"
path = [[5, 60], [90, 55]]
radius = 2
[edges]
left = "absorb"
top = "wrap"
bottom = "wrap"
[[stone]]
at = 0.1
x = 20
y = 20
radius = 4
weight = 900
[[stone]]
at = 0.3
x = 20
y = 1
radius = 5
weight = 900
T
cat > extra/wrapspring.toml <<'T'
[video]
width = 80
height = 60
frames = 40
start = 0.4
[background]
pattern = "checker"
[water]
model = "spring"
settle = true
steps_per_second = 40
refraction = 0.5
[look]
sampling = "bilinear"
shading = 200
highlight = 400
[edges]
all = "wrap"
[[stone]]
at = 0.5
x = 2
y = 3
radius = 6
weight = 3000
[rain]
drops_per_second = 20
seed = 9
[seamless]
repeat = true
crossfade = 5
T
cat > extra/plain.toml <<'T'
[video]
width = 50
height = 40
frames = 12
[[stone]]
at = 0.0
x = 25
y = 20
weight = 500
[[damping]]
at = 0.2
shift = 2
T
cp $ROOT/scenes/breakwater.png extra/mask.png
cat > extra/mask.toml <<'T'
[video]
width = 120
height = 80
frames = 20
[background]
image = "mask.png"
[mask]
image = "mask.png"
threshold = 100
[[stone]]
at = 0.0
x = 60
y = 70
radius = 5
weight = 800
T
scenes=$(ls scenes/*.toml golden/*.toml extra/*.toml | grep -v busy1080)
n=0
for s in $scenes; do
  name=$(echo $s | tr / _ | sed 's/.toml//')
  for fmt in gif apng webp; do
    $BIN $s -o $name.$fmt -q --hashes $name.$fmt.hashes 2> $name.$fmt.err; echo "rc=$?" >> $name.$fmt.err
  done
  $BIN $s -o $name.still.png --frame 3 -q 2> $name.still.err; echo "rc=$?" >> $name.still.err
  $BIN $s -o $name.frames/ -q 2>$name.frames.err; echo "rc=$?" >> $name.frames.err
  $BIN $s -o $name.ifr/ --indexed-png -q 2>$name.ifr.err; echo "rc=$?" >> $name.ifr.err
  $BIN $s -o $name.dith.gif --dither -q 2>$name.dith.err; echo "rc=$?" >> $name.dith.err
  $BIN $s --hashes $name.only.hashes -q --threads 1 2>$name.only.err; echo "rc=$?" >> $name.only.err
  $BIN plan $s > $name.plan.txt 2>&1; echo "rc=$?" >> $name.plan.txt
  $BIN plan --events $s > $name.plan.ev.txt 2>&1; echo "rc=$?" >> $name.plan.ev.txt
  $BIN plan --json $s > $name.plan.json 2>&1; echo "rc=$?" >> $name.plan.json
  $BIN plan $s --walls $name.walls.png > $name.plan.walls.txt 2>&1; echo "rc=$?" >> $name.plan.walls.txt
  $BIN diff $name.gif $s > $name.diffgs.txt 2>&1; echo "rc=$?" >> $name.diffgs.txt
  $BIN diff $name.apng $name.webp --json > $name.diffaw.json 2>&1; echo "rc=$?" >> $name.diffaw.json
  $BIN diff $name.frames $name.only.hashes > $name.diffh.txt 2>&1; echo "rc=$?" >> $name.diffh.txt
  $BIN $s -o - --format gif -q --threads 3 > $name.stdout.gif 2>$name.stdout.err; echo "rc=$?" >> $name.stdout.err
  $BIN $s -o - --format webp -q > $name.stdout.webp 2>>$name.stdout.err; echo "rc=$?" >> $name.stdout.err
  # summary line without timing
  $BIN $s -o $name.sum.gif 2>&1 | sed -E 's/in [0-9.]+ s/in X s/' > $name.summary.txt
  $BIN $s -o $name.sum.gif --stats -q -f 2>&1 | sed -E 's/"[a-z]+_s":[0-9.e-]+/T/g' > $name.stats.txt
done
# max size ladders
for s in scenes/pond.toml golden/lit.toml extra/plain.toml; do
  name=$(echo $s | tr / _ | sed 's/.toml//')
  for fmt in gif apng webp; do
    for lim in 30K 200K 600K 3M; do
      $BIN $s -o $name.max$lim.$fmt --max-size $lim 2>&1 | sed -E 's/in [0-9.]+ s/in X s/' > $name.max$lim.$fmt.err; echo "rc=$?" >> $name.max$lim.$fmt.err
    done
  done
done
# effort levels, lossy outputs and parts joined
for s in scenes/pond.toml scenes/pool.toml golden/lit.toml extra/wrapspring.toml; do
  name=$(echo $s | tr / _ | sed 's/.toml//')
  for fmt in gif apng webp; do
    for effort in fast max; do
      $BIN $s -o $name.$effort.$fmt --effort $effort -q 2> $name.$effort.$fmt.err; echo "rc=$?" >> $name.$effort.$fmt.err
    done
  done
  $BIN $s -o $name.still.max.png --frame 5 --effort max -q 2> $name.still.max.err; echo "rc=$?" >> $name.still.max.err
  for q in 30 75 100; do
    $BIN $s -o $name.q$q.webp --quality=$q -q 2> $name.q$q.err; echo "rc=$?" >> $name.q$q.err
  done
  $BIN $s -o $name.qdef.webp --quality -q 2> $name.qdef.err; echo "rc=$?" >> $name.qdef.err
  for l in 20 80 200; do
    $BIN $s -o $name.l$l.gif --lossy=$l -q 2> $name.l$l.err; echo "rc=$?" >> $name.l$l.err
  done
  $BIN $s -o $name.ldef.gif --lossy -q --threads 1 2> $name.ldef.err; echo "rc=$?" >> $name.ldef.err
  for fmt in gif apng webp; do
    mkdir -p $name.parts.$fmt
    for k in 1 2 3; do
      $BIN $s -o $name.parts.$fmt/p$k.$fmt --frames $k/3 -q 2>> $name.parts.$fmt.err; echo "rc=$?" >> $name.parts.$fmt.err
    done
    $BIN join $name.parts.$fmt/p1.$fmt $name.parts.$fmt/p2.$fmt $name.parts.$fmt/p3.$fmt -o $name.joined.$fmt 2>&1 | sed -E 's/in [0-9.]+ s/in X s/' >> $name.parts.$fmt.err
  done
  $BIN $s -o $name.parts.max.gif --frames 2/3 --effort max -q 2> $name.parts.max.err; echo "rc=$?" >> $name.parts.max.err
done
# check: blessed references, a clean check, and the report of an edited scene
mkdir -p chk/scenes; cp scenes/*.png chk/scenes/; cp scenes/pond.toml scenes/rain.toml scenes/slit.toml chk/scenes/
(cd chk && $BIN check scenes/*.toml --refs refs --bless=all --force > bless.txt 2>&1; echo "rc=$?" >> bless.txt
 $BIN check scenes/*.toml --refs refs --json > clean.json 2>&1; echo "rc=$?" >> clean.json
 sed -i 's/^weight = .*/weight = 444/' scenes/rain.toml
 $BIN check scenes/*.toml --refs refs --report report --junit junit.xml > edited.txt 2>&1; echo "rc=$?" >> edited.txt
 sed -E -i 's/[0-9]+\.[0-9]+ ?s\b/X s/g; s/"(seconds|time)": ?[0-9.e-]+/"\1":T/g; s/time="[0-9.]+"/time="T"/g' bless.txt clean.json edited.txt junit.xml report/check.json 2>/dev/null
 rm -f report/*.html)
# serve's frames: every frame of a render, fetched as the page fetches them
for s in scenes/pond.toml golden/lit.toml; do
  name=$(echo $s | tr / _ | sed 's/.toml//')
  port=$((20000 + RANDOM % 20000))
  $BIN serve $s --port $port > $name.serve.log 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    curl -s "http://127.0.0.1:$port/state" 2>/dev/null | grep -q '"done":true' && break
    sleep 0.1
  done
  frames=$(curl -s "http://127.0.0.1:$port/state" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["generation"], s["render"]["frames"])')
  set -- $frames
  mkdir -p $name.serve
  for f in $(seq 0 $(($2 - 1))); do
    curl -s -o $name.serve/$f.png "http://127.0.0.1:$port/frame/$1/$f.png"
  done
  kill $pid; wait $pid 2>/dev/null
  sed -i -E 's/127\.0\.0\.1:[0-9]+/ADDR/' $name.serve.log
done
# diff reports with a change
$BIN scenes/pond.toml -o pondA.gif -q; $BIN scenes/pond.toml --set 'stone[1].x=99' -o pondB.gif -q
$BIN diff pondA.gif pondB.gif --out rep1 > rep1.txt 2>&1; echo "rc=$?" >> rep1.txt
$BIN scenes/pond.toml -o pondA.apng -q; $BIN scenes/pond.toml --set 'stone[1].x=99' -o pondB.apng -q
$BIN diff pondA.apng pondB.apng --out rep2 --json > rep2.json 2>&1; echo "rc=$?" >> rep2.json
$BIN diff pondA.apng pondB.apng --tolerance 3 --max-pixels 10 > rep3.txt 2>&1; echo "rc=$?" >> rep3.txt
$BIN diff extra_plain.frames golden_rain.gif > rep4.txt 2>&1; echo "rc=$?" >> rep4.txt
# new
$BIN new golden/photo.png -o new1.toml > new1.txt 2>&1; echo "rc=$?" >> new1.txt
$BIN new scenes/koi.png -o new2.toml --model spring > new2.txt 2>&1; echo "rc=$?" >> new2.txt
$BIN new1.toml -o new1.gif -q; $BIN new2.toml -o new2.webp -q
# completions and the man page, made from the command line's definitions
for sh in bash zsh fish powershell elvish; do $BIN completions $sh > completions.$sh.txt 2>&1; done
$BIN man > man.txt 2>&1
# errors
e() { echo "== $*" >> errors.txt; "$BIN" "$@" >> errors.txt 2>&1; echo "rc=$?" >> errors.txt; }
printf '[video]\nwidth = 0\n' > bad1.toml; e bad1.toml -o x.gif
printf '[video]\nfps = 60\n[[stone]]\nat=0\nx=1\ny=1\nweight=5\n' > bad2.toml; e bad2.toml -o x.gif
printf '[[stone]]\nat=0\nx=1\ny=1\nwieght=5\n' > bad3.toml; e bad3.toml -o x.gif
printf '[background]\nimage = "nope.png"\n' > bad4.toml; e bad4.toml -o x.gif
printf '[mask]\nimage = "nope.png"\n' > bad5.toml; e bad5.toml -o x.gif
printf 'x = [\n' > bad6.toml; e bad6.toml -o x.gif
e extra/plain.toml -o x.png
e extra/plain.toml -o x.mov
e extra/plain.toml -o x.mp4 --format gif
e extra/plain.toml -o - 
e extra/plain.toml -o x.gif --frame 3
e extra/plain.toml -o x.png --frame 99
e extra/plain.toml -o frames/ --max-size 1M
e extra/plain.toml -o x.gif --max-size 1M --hashes h.txt
e extra/plain.toml -o x.gif --set 'stone[3].x=1'
e extra/plain.toml -o x.gif --set 'water.refraction=99'
e extra/plain.toml -o x.gif --set 'nonsense'
e extra/plain.toml -o extra/plain.toml
e extra/plain.toml -o pondA.gif
e extra/plain.toml -o x.gif --max-memory 1M
e scenes/pond.toml -o x.gif --max-memory 20M
e plan scenes/pond.toml --max-memory 1K
e diff nothing.gif pondA.gif
e diff pondA.gif bad1.toml
e diff pondA.gif pondA.gif --json
e extra/plain.toml -o nodir/x.gif
e extra/plain.toml -o x.gif --threads 0
e extra/plain.toml --frame 2
e new nothing.png -o n.toml
e new golden/photo.png -o new1.toml
e --help
e diff --help
e plan --help
e --version
# drop timing-dependent lines, and the commit a build names in --version and the man page
for f in *.err *.txt; do sed -i -E 's/in [0-9.]+ s/in X s/; s/\(([0-9a-f]{12}|unknown)(-dirty)?, /(COMMIT, /' "$f"; done
rm -rf scenes golden extra/*.toml extra/*.png

}
(matrix "$old" "$work/old" "$root") >/dev/null 2>&1
(matrix "$new" "$work/new" "$root") >/dev/null 2>&1
if diff -rq "$work/old" "$work/new"; then
    echo "same bytes: $(find "$work/new" -type f | wc -l) files"
else
    echo "differs (above)" >&2
    exit 1
fi
