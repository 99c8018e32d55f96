#!/usr/bin/python3
"""Runs RedisBloom's own flow tests (src/tests/flow in its source tarball) against
a real server: `bloomkit serve`, or redis-server with the RedisBloom module (to
check this runner and its RLTest stand-in against the server the tests were
written for).

The tests are read from the tarball at run time; none of RedisBloom's code is
kept in this repository. Each test runs as RLTest runs it, through the stand-in
in stand-in/RLTest: a failed assertion is recorded and the test goes on.

The scope: a test stops at the first command of a module outside --scope (CMS,
TDIGEST and TOPK always; CF until it is named), and counts as passed when
everything before it passed and it ran a command in scope ("part"), or is not
counted when it ran none ("out of scope"). So test_resp3's one test, which mixes
every module, checks its BF part with --scope bf.

Differences from RedisBloom that are by design are listed, each with its
reason, in the file given to --expected (docs/serve.md says the same). A
listed test that fails is an expected difference; one that passes is an error
(the list must stay true), and so is any other failure.

Usage:
  run.py --tarball T --bloomkit BIN [--scope bf,cf] [--expected FILE] [-k SUBSTRING]
  run.py --tarball T --redisbloom MODULE.so [--scope bf,cf]

Prints a line a test and closes with "N passed, N failed, N skipped" (the
skipped: skipped by the test, out of scope, or an expected difference); exits 1
on an unexpected result.
"""
import argparse
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
FLOW = "src/tests/flow/"
FILES = ["test_overall.py", "test_cuckoo.py", "test_resp3.py"]
TEST_TIMEOUT = 120  # seconds a test may take before it counts as failed


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_ready(host, port, proc, log, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the server exited (%d): see %s" % (proc.returncode, log))
        try:
            with socket.create_connection((host, port), timeout=1) as c:
                c.sendall(b"PING\r\n")
                if c.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("the server did not answer PING within %d s: see %s" % (seconds, log))


class Server:
    """A server process on a loopback port, with the reload the tests ask for."""

    host = "127.0.0.1"

    def __init__(self, work, scope):
        self.work = work
        self.port = free_port()
        self.scope = scope
        self.proc = None
        self.log = os.path.join(work, "server.log")

    def _spawn(self, argv):
        out = open(self.log, "ab")
        self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_ready(self.host, self.port, self.proc, self.log)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Bloomkit(Server):
    """bloomkit serve over a folder of its own. A reload (RLTest's
    dumpAndReload, which RedisBloom's tests use to check persistence) is a
    restart of the process on the same folder: SIGTERM (a clean shutdown),
    then serve again."""

    name = "bloomkit"

    def __init__(self, work, scope, binary):
        super().__init__(work, scope)
        self.binary = binary
        self.dir = os.path.join(work, "filters")
        os.mkdir(self.dir)
        self.start()

    def start(self):
        self._spawn([self.binary, "serve", "-dir", self.dir, "-addr", "%s:%d" % (self.host, self.port),
                     "-enable-flush"])

    def reload(self):
        self.stop()
        self.start()


class RedisBloom(Server):
    """redis-server with the RedisBloom module; a reload is DEBUG RELOAD."""

    name = "redisbloom"

    def __init__(self, work, scope, module):
        super().__init__(work, scope)
        self._spawn(["redis-server", "--port", str(self.port), "--bind", self.host, "--save", "",
                     "--appendonly", "no", "--dir", work, "--enable-debug-command", "local",
                     "--loadmodule", module])

    def reload(self):
        import redis
        redis.Redis(host=self.host, port=self.port).execute_command("DEBUG", "RELOAD")


def extract(tarball, into):
    with tarfile.open(tarball) as t:
        for name in ["common.py"] + FILES:
            m = t.getmember(FLOW + name)
            with t.extractfile(m) as src, open(os.path.join(into, name), "wb") as dst:
                shutil.copyfileobj(src, dst)


def load_expected(path):
    out = {}
    if not path:
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            test, _, reason = line.partition(" ")
            out[test] = reason.strip()
    return out


def tests_of(module):
    """The test methods of the module's test classes, in the order written
    (a method defined twice runs once, as Python keeps the last)."""
    for cname, cls in vars(module).items():
        if isinstance(cls, type) and cname.startswith("test"):
            names = [n for n, v in vars(cls).items() if n.startswith("test") and callable(v)]
            yield cname, cls, names


class Timeout(Exception):
    pass


def on_alarm(*_):
    raise Timeout("took longer than %d s" % TEST_TIMEOUT)


def run_one(Env, obj, method):
    """Returns (status, detail): status one of pass, part, fail, skip, out."""
    from RLTest import OutOfScope, SkipTest
    Env.failures = []
    Env.assertions = 0
    Env.commands_in_scope = 0
    signal.alarm(TEST_TIMEOUT)
    try:
        getattr(obj, method)()
        status = "pass"
        detail = ""
    except SkipTest as e:
        return "skip", str(e)
    except OutOfScope as e:
        if Env.commands_in_scope == 0:
            return "out", "its first module command is %s" % e.command
        status, detail = "part", "stopped at %s" % e.command
    except AssertionError:
        tb = traceback.extract_tb(sys.exc_info()[2])[-1]
        Env.failures.append("assert at line %d: %s" % (tb.lineno, tb.line))
        status, detail = "fail", ""
    except Exception as e:
        tb = traceback.extract_tb(sys.exc_info()[2])
        where = next((f for f in reversed(tb) if os.path.basename(f.filename).startswith("test_")), tb[-1])
        Env.failures.append("%s: %s at line %d: %s" % (type(e).__name__, e, where.lineno, where.line))
        status, detail = "fail", ""
    finally:
        signal.alarm(0)
    if Env.failures:
        return "fail", "; ".join(Env.failures[:3]) + (" (+%d more)" % (len(Env.failures) - 3) if len(Env.failures) > 3 else "")
    return status, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tarball", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--bloomkit", metavar="BIN")
    g.add_argument("--redisbloom", metavar="MODULE_SO")
    ap.add_argument("--scope", default="bf", help="module prefixes in scope, comma-separated (bf, cf)")
    ap.add_argument("--expected", help="the expected differences (bloomkit runs)")
    ap.add_argument("-k", default="", help="run only tests whose id contains this")
    args = ap.parse_args()

    scope = tuple(p.strip().lower() + "." for p in args.scope.split(",") if p.strip())
    expected = load_expected(args.expected)
    work = tempfile.mkdtemp(prefix="rbflow.")
    flow = os.path.join(work, "flow")
    os.mkdir(flow)
    extract(args.tarball, flow)
    sys.path[:0] = [os.path.join(HERE, "stand-in"), flow]
    signal.signal(signal.SIGALRM, on_alarm)
    from RLTest import Env

    server = None
    counts = {"pass": 0, "part": 0, "fail": 0, "skip": 0, "out": 0, "diff": 0}
    bad = []
    seen = set()
    try:
        server = (Bloomkit(work, scope, os.path.abspath(args.bloomkit)) if args.bloomkit
                  else RedisBloom(work, scope, os.path.abspath(args.redisbloom)))
        Env.server = server
        for fname in FILES:
            spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(flow, fname))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            for cname, cls, methods in tests_of(mod):
                obj = None
                for m in methods:
                    tid = "%s::%s::%s" % (fname, cname, m)
                    if args.k not in tid:
                        continue
                    seen.add(tid)
                    if obj is None:
                        obj = cls()
                    status, detail = run_one(Env, obj, m)
                    listed = tid in expected
                    if status == "fail" and listed:
                        status = "diff"
                        detail = "expected difference: %s (%s)" % (expected[tid], detail)
                    elif status in ("pass", "part") and listed:
                        bad.append("%s passes but is listed as a difference: take it off %s" % (tid, args.expected))
                    elif status == "fail":
                        bad.append("%s: %s" % (tid, detail))
                    counts[status] += 1
                    print("%-5s %s%s" % (status, tid, "  " + detail if detail else ""), flush=True)
    finally:
        if server:
            server.stop()
    for tid in expected:
        if tid not in seen and not args.k:
            bad.append("%s is listed in %s but is no test of the flow suite" % (tid, args.expected))
    shutil.rmtree(work, ignore_errors=True)
    print("\n%s against %s: %d whole, %d in their %s part, %d expected differences, %d out of scope" % (
        "RedisBloom flow tests", "bloomkit serve" if args.bloomkit else "RedisBloom",
        counts["pass"], counts["part"], args.scope, counts["diff"], counts["out"]))
    for b in bad:
        print("UNEXPECTED: " + b)
    # Expected differences count as skipped: they were not passed.
    print("%d passed, %d failed, %d skipped" % (counts["pass"] + counts["part"], len(bad),
                                                counts["skip"] + counts["out"] + counts["diff"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
