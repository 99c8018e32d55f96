#!/usr/bin/python3
"""Makes the golden files of package bf from a running RedisBloom 2.6.28
(redis-server --loadmodule redisbloom.so): for each chain below, NAME.dump
(its DUMP payload, as Redis compresses it), NAME.chunks (its BF.SCANDUMP
chunks: a u64 iterator, a u32 length and the bytes, little-endian, each),
and NAME.json (BF.CARD, BF.INFO, MEMORY USAGE, and BF.MEXISTS of 20,000
never-added items as a string of 0s and 1s). Usage: gen.py PORT"""
import json
import struct
import sys

import redis

CHAINS = [
    # name, BF.RESERVE arguments, items added
    ("scaling", ["0.01", "1000"], 5000),
    ("nonscaling", ["0.001", "2000", "NONSCALING"], 2000),
    ("expansion3", ["0.1", "100", "EXPANSION", "3"], 2500),
]

r = redis.Redis(port=int(sys.argv[1]))
for name, reserve, n in CHAINS:
    r.delete(name)
    r.execute_command("BF.RESERVE", name, *reserve)
    items = ["item:%d" % i for i in range(n)]
    for i in range(0, n, 500):
        r.execute_command("BF.MADD", name, *items[i:i + 500])
    with open(name + ".dump", "wb") as f:
        f.write(r.dump(name))
    with open(name + ".chunks", "wb") as f:
        it = 0
        while True:
            it, data = r.execute_command("BF.SCANDUMP", name, it)
            if it == 0:
                break
            f.write(struct.pack("<QI", it, len(data)) + data)
    absent = ["absent:%d" % i for i in range(20000)]
    answers = "".join(str(x) for x in r.execute_command("BF.MEXISTS", name, *absent))
    info = r.execute_command("BF.INFO", name)
    out = {
        "reserve": reserve, "added": n,
        "card": r.execute_command("BF.CARD", name),
        "info": {info[i].decode(): info[i + 1] for i in range(0, len(info), 2)},
        "memory_usage": r.memory_usage(name),
        "absent_answers": answers,
    }
    with open(name + ".json", "w") as f:
        json.dump(out, f, indent=1)
    print(name, out["card"], out["info"], answers.count("1"), "false positives of", len(absent))
