#!/usr/bin/python3
"""Makes the golden files of package cf from a running RedisBloom 2.6.28
(redis-server --loadmodule redisbloom.so). Each case below runs a fixed
sequence of commands (cf_test.go's replay runs the same one), then writes
NAME.dump (the DUMP payload), NAME.chunks (the CF.SCANDUMP chunks: a u64
position, a u32 length and the bytes, little-endian, each) and NAME.json
(CF.INFO, the reply of every add, CF.EXISTS and CF.COUNT of every item
added, and CF.MEXISTS of 20,000 never-added items as 0s and 1s).
Usage: gen.py PORT"""
import json
import struct
import sys

import redis

# name, CF.RESERVE arguments, adds, every how many'th added item is deleted
CASES = [
    ("grown", ["1000"], 3000, 7),
    ("bucket4", ["2000", "BUCKETSIZE", "4", "MAXITERATIONS", "50", "EXPANSION", "2"], 10000, 11),
    ("fixed", ["512", "EXPANSION", "0"], 700, 0),
]

r = redis.Redis(port=int(sys.argv[1]))
for name, reserve, n, every in CASES:
    r.delete(name)
    r.execute_command("CF.RESERVE", name, *reserve)
    adds = []
    for i in range(n):
        item = "item:%d" % (i % (n - n // 10))  # the last tenth adds items again
        try:
            adds.append(int(r.execute_command("CF.ADD", name, item)))
        except redis.ResponseError as e:
            adds.append(str(e))
    deleted = []
    if every:
        for i in range(0, n, every):
            deleted.append(int(r.execute_command("CF.DEL", name, "item:%d" % (i % (n - n // 10)))))
    with open(name + ".dump", "wb") as f:
        f.write(r.dump(name))
    with open(name + ".chunks", "wb") as f:
        pos = 0
        while True:
            pos, data = r.execute_command("CF.SCANDUMP", name, pos)
            if pos == 0:
                break
            f.write(struct.pack("<QI", pos, len(data)) + data)
    distinct = ["item:%d" % i for i in range(n - n // 10)]
    info = r.execute_command("CF.INFO", name)
    out = {
        "reserve": reserve, "adds": n, "delete_every": every,
        "add_replies": adds, "del_replies": deleted,
        "info": {info[i].decode(): info[i + 1] for i in range(0, len(info), 2)},
        "exists": "".join(str(x) for x in r.execute_command("CF.MEXISTS", name, *distinct)),
        "counts": [int(r.execute_command("CF.COUNT", name, x)) for x in distinct],
        "absent": "".join(str(x) for x in r.execute_command(
            "CF.MEXISTS", name, *["absent:%d" % i for i in range(20000)])),
    }
    with open(name + ".json", "w") as f:
        json.dump(out, f)
    print(name, out["info"], out["absent"].count("1"), "false positives of 20000")
