"""redis-py with its default settings against a BF.* server (issue 31's client matrix).

Usage: python3 redis_py.py HOST PORT. Prints 'ok redis-py STEP' per step; exits 1 at the first
failure, naming it. Debian's python3-redis (4.3) speaks RESP2 only; a redis-py of 5.0 or later
also runs the RESP3 steps (protocol=3)."""
import sys

import redis

host, port = sys.argv[1], int(sys.argv[2])
step = "connect"


def ok(name):
    print(f"ok redis-py {name}", flush=True)


def run(r, tag):
    global step
    key = f"py-{tag}"
    step = f"{tag} ping"
    assert r.ping() is True
    ok(step)
    r.delete(key)
    step = f"{tag} BF.RESERVE"
    assert r.execute_command("BF.RESERVE", key, 0.01, 1000) in (b"OK", "OK", True)
    ok(step)
    step = f"{tag} BF.ADD"
    assert r.execute_command("BF.ADD", key, "a") in (1, True)
    ok(step)
    step = f"{tag} BF.MADD"
    assert [int(x) for x in r.execute_command("BF.MADD", key, "a", "b", "c")] == [0, 1, 1]
    ok(step)
    step = f"{tag} BF.EXISTS"
    assert int(r.execute_command("BF.EXISTS", key, "b")) == 1
    assert int(r.execute_command("BF.EXISTS", key, "zz-never")) == 0
    ok(step)
    step = f"{tag} BF.MEXISTS"
    assert [int(x) for x in r.execute_command("BF.MEXISTS", key, "a", "zz-never")] == [1, 0]
    ok(step)
    step = f"{tag} BF.INFO"
    info = r.execute_command("BF.INFO", key)
    if isinstance(info, dict):
        fields = {str(k.decode() if isinstance(k, bytes) else k): v for k, v in info.items()}
    else:
        fields = {info[i].decode() if isinstance(info[i], bytes) else info[i]: info[i + 1] for i in range(0, len(info), 2)}
    assert int(fields["Capacity"]) == 1000 and int(fields["Number of items inserted"]) == 3, fields
    ok(step)
    if hasattr(r, "bf"):
        step = f"{tag} bf() helpers"
        bf = r.bf()
        bf.add(key, "d")
        assert int(bf.exists(key, "d")) == 1
        assert [int(x) for x in bf.mexists(key, "d", "zz-never")] == [1, 0]
        ok(step)
    step = f"{tag} default pipeline (MULTI/EXEC)"
    p = r.pipeline()
    p.execute_command("BF.ADD", key, "e")
    p.execute_command("BF.EXISTS", key, "e")
    res = p.execute()
    assert [int(x) for x in res] == [1, 1], res
    ok(step)
    step = f"{tag} pipeline(transaction=False)"
    p = r.pipeline(transaction=False)
    for i in range(100):
        p.execute_command("BF.EXISTS", key, f"x{i}")
    assert len(p.execute()) == 100
    ok(step)
    step = f"{tag} module_list (bf)"
    mods = r.module_list()
    names = [(m.get(b"name") or m.get("name")) for m in mods]
    assert any(n in (b"bf", "bf") for n in names), mods
    ok(step)
    step = f"{tag} memory_usage / info memory / client_list"
    assert int(r.memory_usage(key)) > 0
    assert r.memory_usage(f"{key}-none") is None
    assert int(r.info("memory")["used_memory"]) > 0
    assert any(c.get("id") == str(r.client_id()) for c in r.client_list())
    ok(step)
    step = f"{tag} bf().scandump / loadchunk (copy to a new key)"
    r.delete(f"{key}-copy")
    it, chunks = 0, []
    while True:
        it, data = r.bf().scandump(key, it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        r.bf().loadchunk(f"{key}-copy", it, data)
    assert [int(x) for x in r.execute_command("BF.MEXISTS", f"{key}-copy", "a", "b", "c", "zz-never")] == [1, 1, 1, 0]
    r.delete(f"{key}-copy")
    ok(step)
    step = f"{tag} rename / expire / ttl / persist"
    r.delete(f"{key}-2")
    assert r.rename(key, f"{key}-2")
    assert int(r.execute_command("BF.EXISTS", f"{key}-2", "a")) == 1
    assert r.expire(f"{key}-2", 100)
    assert 90 <= r.ttl(f"{key}-2") <= 100
    assert r.persist(f"{key}-2")
    assert r.ttl(f"{key}-2") == -1
    assert r.rename(f"{key}-2", key)
    ok(step)
    r.delete(key)


try:
    run(redis.Redis(host=host, port=port), "resp2")
    major = int(redis.__version__.split(".")[0])
    if major >= 5:
        run(redis.Redis(host=host, port=port, protocol=3), "resp3")
    else:
        print(f"note redis-py {redis.__version__} has no RESP3 (protocol=3 needs 5.0)", flush=True)
except Exception as e:  # report the step that failed, whatever failed
    print(f"FAIL redis-py {step}: {type(e).__name__}: {e}", flush=True)
    sys.exit(1)
