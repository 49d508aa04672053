#!/usr/bin/env python3
"""Derives the rain test vector independently of the Rust code and its dependencies.

The generator is ChaCha with 8 rounds (D. J. Bernstein), key = the seed as 8 little-endian bytes
then 24 zero bytes, 64-bit block counter and 64-bit stream id starting at 0; a 64-bit draw is two
consecutive 32-bit output words, low word first. A draw in lo..=hi uses Lemire's
multiply-and-reject. The scene: 320×240 at 25 fps, 20 drops a second (0.8 a frame), radius
[1, 3], weight [32, 64], seed 7. Prints the first drops as `frame, x, y, radius, weight`.
"""

MASK = 0xFFFFFFFF


def rotl(v, n):
    return ((v << n) & MASK) | (v >> (32 - n))


def quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 7)


def chacha8_words(key_bytes):
    key = [int.from_bytes(key_bytes[i:i + 4], "little") for i in range(0, 32, 4)]
    counter = 0
    while True:
        state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574] + key + [counter & MASK, counter >> 32, 0, 0]
        s = state[:]
        for _ in range(4):  # 8 rounds = 4 double rounds
            quarter(s, 0, 4, 8, 12); quarter(s, 1, 5, 9, 13); quarter(s, 2, 6, 10, 14); quarter(s, 3, 7, 11, 15)
            quarter(s, 0, 5, 10, 15); quarter(s, 1, 6, 11, 12); quarter(s, 2, 7, 8, 13); quarter(s, 3, 4, 9, 14)
        for i in range(16):
            yield (s[i] + state[i]) & MASK
        counter += 1


class Rng:
    def __init__(self, seed):
        self.words = chacha8_words(seed.to_bytes(8, "little") + bytes(24))

    def u64(self):
        lo = next(self.words)
        return lo | (next(self.words) << 32)

    def in_range(self, lo, hi):
        span = hi - lo + 1
        threshold = (2**64 - span) % span
        while True:
            product = self.u64() * span
            if product & (2**64 - 1) >= threshold:
                return lo + (product >> 64)


def main():
    rng = Rng(7)
    acc, per_frame = 0.0, 20.0 / 25
    drops = []
    frame = 0
    while len(drops) < 8:
        acc = acc + per_frame
        n = int(acc // 1)
        acc = acc - n
        for _ in range(n):
            drops.append((frame, rng.in_range(1, 318), rng.in_range(1, 238), rng.in_range(1, 3), rng.in_range(32, 64)))
        frame += 1
    for d in drops[:8]:
        print(", ".join(map(str, d)))


if __name__ == "__main__":
    main()
