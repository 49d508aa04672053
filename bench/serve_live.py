#!/usr/bin/env python3
"""`ripple-render serve` on every bundled scene: how long until the page's first frame is made and
the whole render is, after the server starts; and after the scene is saved again, until the new
render's first frame and its middle frame are made (what the page then shows, keeping its place).
Times are the server's (its /state), on this machine, one run each.

Usage: python3 bench/serve_live.py   (after cargo build --release)
"""
import os
import json, re, shutil, subprocess, time, urllib.request
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for name in sorted(os.listdir(root + "/scenes")):
    if not name.endswith(".toml"): continue
    d = "/tmp/live_" + name[:-5]
    shutil.rmtree(d, ignore_errors=True); shutil.copytree(root + "/scenes", d)
    p = subprocess.Popen([root + "/target/release/ripple-render", "serve", name], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    t0 = time.time()
    line = p.stdout.readline(); port = re.search(r":(\d+)/", line).group(1)
    def state():
        return json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/state"))
    first = done = None
    while done is None:
        s = state()
        if s["ready"] > 0 and first is None: first = time.time() - t0
        if s["done"]: done = time.time() - t0
        time.sleep(0.01)
    frames = s["render"]["frames"]
    # edit: touch the scene (append a comment) and time the new generation's frame at the middle
    g = s["generation"]; mid = frames // 2
    t1 = time.time()
    with open(f"{d}/{name}", "a") as f: f.write("\n# edited\n")
    first2 = mid2 = None
    while mid2 is None:
        s = state()
        if s["generation"] != g:
            if s["ready"] > 0 and first2 is None: first2 = time.time() - t1
            if s["ready"] > mid: mid2 = time.time() - t1
        time.sleep(0.01)
    p.kill()
    print(f"{name:14} {frames:4} frames  first {first:.2f} s, all {done:.2f} s; after a save: first {first2:.2f} s, frame {mid} {mid2:.2f} s")
