// ioredis with its default settings against a BF.* server (issue 31's client matrix).
// Usage: node ioredis.mjs HOST PORT (NODE_PATH naming the node_modules folder with "ioredis").
import { createRequire } from "module";
const require = createRequire(process.env.NODE_PATH + "/");
const Redis = require("ioredis");

const [host, port] = process.argv.slice(2);
let step = "connect";
const ok = (s) => console.log(`ok ioredis ${s}`);
const fail = (e) => {
  console.log(`FAIL ioredis ${step}: ${e && e.message ? e.message : e}`);
  process.exit(1);
};
setTimeout(() => fail(new Error("timed out after 20 s")), 20000).unref();

try {
  const r = new Redis({ host, port: Number(port), maxRetriesPerRequest: 1 });
  const key = "ioredis-k";
  step = "PING";
  if ((await r.ping()) !== "PONG") throw new Error("no PONG");
  ok(step);
  await r.del(key);
  step = "BF.RESERVE";
  await r.call("BF.RESERVE", key, "0.01", "1000");
  ok(step);
  step = "BF.ADD";
  if ((await r.call("BF.ADD", key, "a")) !== 1) throw new Error("a not new");
  ok(step);
  step = "BF.MADD";
  const madd = await r.call("BF.MADD", key, "a", "b", "c");
  if (JSON.stringify(madd) !== "[0,1,1]") throw new Error(JSON.stringify(madd));
  ok(step);
  step = "BF.EXISTS / BF.MEXISTS";
  if ((await r.call("BF.EXISTS", key, "b")) !== 1) throw new Error("exists");
  if (JSON.stringify(await r.call("BF.MEXISTS", key, "a", "zz-never")) !== "[1,0]") throw new Error("mexists");
  ok(step);
  step = "BF.INFO";
  const info = await r.call("BF.INFO", key);
  if (!Array.isArray(info) || Number(info[1]) !== 1000) throw new Error(JSON.stringify(info));
  ok(step);
  step = "pipeline()";
  const p = r.pipeline();
  for (let i = 0; i < 100; i++) p.call("BF.EXISTS", key, `x${i}`);
  const res = await p.exec();
  if (res.length !== 100 || res.some(([e]) => e)) throw new Error("pipeline");
  ok(step);
  step = "multi().exec()";
  const tx = await r.multi().call("BF.ADD", key, "e").call("BF.EXISTS", key, "e").exec();
  if (tx.length !== 2 || tx.some(([e]) => e) || tx[1][1] !== 1) throw new Error(JSON.stringify(tx));
  ok(step);
  step = "MODULE LIST / MEMORY USAGE / CLIENT LIST";
  const mods = await r.call("MODULE", "LIST");
  if (!JSON.stringify(mods).includes('"bf"')) throw new Error(JSON.stringify(mods));
  if (!((await r.call("MEMORY", "USAGE", key)) > 0)) throw new Error("memory usage");
  const id = await r.client("ID");
  if (!String(await r.client("LIST")).includes(`id=${id} `)) throw new Error("client list");
  ok(step);
  step = "BF.SCANDUMP / BF.LOADCHUNK (copy to a new key)";
  await r.del(`${key}-copy`);
  const chunks = [];
  for (let it = 0; ; ) {
    const [next, data] = await r.callBuffer("BF.SCANDUMP", key, it);
    if (Number(next) === 0) break;
    chunks.push([Number(next), data]);
    it = Number(next);
  }
  for (const [it, data] of chunks) await r.call("BF.LOADCHUNK", `${key}-copy`, it, data);
  if (JSON.stringify(await r.call("BF.MEXISTS", `${key}-copy`, "a", "b", "c", "zz-never")) !== "[1,1,1,0]") throw new Error("copy");
  await r.del(`${key}-copy`);
  ok(step);
  step = "rename / expire / ttl / persist";
  await r.del(`${key}-2`);
  await r.rename(key, `${key}-2`);
  if ((await r.call("BF.EXISTS", `${key}-2`, "a")) !== 1) throw new Error("renamed key lost a");
  if ((await r.expire(`${key}-2`, 100)) !== 1) throw new Error("expire");
  const ttl = await r.ttl(`${key}-2`);
  if (ttl < 90 || ttl > 100) throw new Error(`ttl ${ttl}`);
  if ((await r.persist(`${key}-2`)) !== 1 || (await r.ttl(`${key}-2`)) !== -1) throw new Error("persist");
  await r.rename(`${key}-2`, key);
  ok(step);
  await r.del(key);
  r.disconnect();
} catch (e) {
  fail(e);
}
process.exit(0);
