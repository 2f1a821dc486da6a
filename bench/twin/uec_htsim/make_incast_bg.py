#!/usr/bin/env python3
"""Writes tests/data/uec-htsim/incast16_bg48_96.cm, htsim's connection matrix of the
staggered scenario on leaf_spine_96_100g.topo (96 hosts, 12 leaves of 8, 8 spines,
100 Gb/s): a 16-to-1 incast into host 0 (two senders, hosts 1 and 2, on its own leaf, 14
drawn from the other leaves), 500,000 bytes each, starting at 20..40 us, and 48
background flows between other pairs (drawn sizes of 100 kB..2 MB, starting at 0..50 us).
Starts are whole microseconds (htsim reads `start T` as us and truncates it). Every
(src, dst) pair appears once, so a flow's htsim name Uec_<src>_<dst> identifies it.

    /usr/bin/python3 bench/twin/uec_htsim/make_incast_bg.py > tests/data/uec-htsim/incast16_bg48_96.cm
"""
import random

HOSTS, PER_LEAF, RECEIVER = 96, 8, 0
rng = random.Random(43)
senders = [1, 2] + sorted(rng.sample(range(PER_LEAF, HOSTS), 14))
lines = [(s, RECEIVER, 20 + rng.randrange(0, 21), 500_000) for s in senders]
pairs = {(s, d) for s, d, _, _ in lines}
while len(lines) < 16 + 48:
    s, d = rng.randrange(1, HOSTS), rng.randrange(1, HOSTS)
    if s == d or (s, d) in pairs:
        continue
    pairs.add((s, d))
    lines.append((s, d, rng.randrange(0, 51), rng.choice([100_000, 250_000, 1_000_000, 2_000_000])))
print(f"Nodes {HOSTS}")
print(f"Connections {len(lines)}")
for s, d, start, size in lines:
    print(f"{s}->{d} start {start} size {size}")
