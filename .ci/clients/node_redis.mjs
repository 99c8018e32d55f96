// node-redis (npm "redis") with its default settings against a BF.* server (issue 31's client
// matrix). Usage: node node_redis.mjs HOST PORT (with NODE_PATH naming the node_modules folder
// that holds "redis"). Prints "ok node-redis STEP" per step; exits 1 at the first failure.
import { createRequire } from "module";
const require = createRequire(process.env.NODE_PATH + "/");
const { createClient, RESP_TYPES } = require("redis");

const [host, port] = process.argv.slice(2);
let step = "connect (defaults)";
const ok = (s) => console.log(`ok node-redis ${s}`);
const fail = (e) => {
  console.log(`FAIL node-redis ${step}: ${e && e.message ? e.message : e}`);
  process.exit(1);
};
setTimeout(() => fail(new Error("timed out after 20 s")), 20000).unref();

async function run(options, tag) {
  step = `${tag} connect`;
  const errors = [];
  const c = createClient(options);
  c.on("error", (e) => errors.push(e));
  await c.connect();
  ok(step);
  const key = `node-${tag}`;
  step = `${tag} PING`;
  if ((await c.ping()) !== "PONG") throw new Error("no PONG");
  ok(step);
  await c.del(key);
  step = `${tag} bf.reserve`;
  await c.bf.reserve(key, 0.01, 1000);
  ok(step);
  step = `${tag} bf.add`;
  if (!(await c.bf.add(key, "a"))) throw new Error("a not new");
  ok(step);
  step = `${tag} bf.mAdd`;
  const madd = await c.bf.mAdd(key, ["a", "b", "c"]);
  if (JSON.stringify(madd.map(Boolean)) !== "[false,true,true]") throw new Error(JSON.stringify(madd));
  ok(step);
  step = `${tag} bf.exists`;
  if (!(await c.bf.exists(key, "b")) || (await c.bf.exists(key, "zz-never"))) throw new Error("exists");
  ok(step);
  step = `${tag} bf.mExists`;
  const mex = await c.bf.mExists(key, ["a", "zz-never"]);
  if (JSON.stringify(mex.map(Boolean)) !== "[true,false]") throw new Error(JSON.stringify(mex));
  ok(step);
  step = `${tag} bf.info`;
  const info = await c.bf.info(key);
  const cap = info.Capacity ?? info.capacity ?? info["Capacity"];
  if (Number(cap) !== 1000) throw new Error(JSON.stringify(info));
  ok(step);
  step = `${tag} multi().exec()`;
  const tx = await c.multi().bf.add(key, "e").bf.exists(key, "e").exec();
  if (tx.length !== 2 || !tx[1]) throw new Error(JSON.stringify(tx));
  ok(step);
  step = `${tag} pipeline (Promise.all)`;
  const many = await Promise.all(Array.from({ length: 100 }, (_, i) => c.bf.exists(key, `x${i}`)));
  if (many.length !== 100) throw new Error("pipeline");
  ok(step);
  step = `${tag} hello (protocol)`;
  const cinfo = await c.sendCommand(["CLIENT", "INFO"]);
  const resp = String(cinfo).match(/resp=(\d)/);
  if (!resp || resp[1] !== (tag === "resp2" ? "2" : "3")) throw new Error(String(cinfo));
  ok(`${step}: resp=${resp[1]}`);
  step = `${tag} MODULE LIST (bf)`;
  const mods = await c.sendCommand(["MODULE", "LIST"]);
  if (!JSON.stringify(mods).includes('"bf"')) throw new Error(JSON.stringify(mods));
  ok(step);
  step = `${tag} bf.scanDump / bf.loadChunk (copy to a new key)`;
  await c.del(`${key}-copy`);
  const chunks = [];
  const bin = c.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }); // chunks are binary
  for (let it = 0; ; ) {
    const { iterator, chunk } = await bin.bf.scanDump(key, it);
    if (iterator === 0) break;
    chunks.push([iterator, chunk]);
    it = iterator;
  }
  for (const [it, chunk] of chunks) await c.bf.loadChunk(`${key}-copy`, it, chunk);
  const copied = await c.bf.mExists(`${key}-copy`, ["a", "b", "c", "zz-never"]);
  if (JSON.stringify(copied.map(Boolean)) !== "[true,true,true,false]") throw new Error(JSON.stringify(copied));
  await c.del(`${key}-copy`);
  ok(step);
  step = `${tag} rename / expire / ttl / persist / memory usage`;
  await c.del(`${key}-2`);
  await c.rename(key, `${key}-2`);
  if (!(await c.bf.exists(`${key}-2`, "a"))) throw new Error("renamed key lost a");
  if (!(await c.expire(`${key}-2`, 100))) throw new Error("expire");
  const ttl = await c.ttl(`${key}-2`);
  if (ttl < 90 || ttl > 100) throw new Error(`ttl ${ttl}`);
  if (!(await c.persist(`${key}-2`)) || (await c.ttl(`${key}-2`)) !== -1) throw new Error("persist");
  if (!((await c.memoryUsage(`${key}-2`)) > 0)) throw new Error("memory usage");
  await c.rename(`${key}-2`, key);
  ok(step);
  await c.del(key);
  await c.quit();
  if (errors.length) throw errors[0];
}

try {
  await run({ url: `redis://${host}:${port}` }, "default");
  await run({ url: `redis://${host}:${port}`, RESP: 2 }, "resp2");
} catch (e) {
  fail(e);
}
process.exit(0);
