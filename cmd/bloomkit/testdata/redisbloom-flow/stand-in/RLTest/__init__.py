"""A small stand-in for the RLTest framework, as much of it as RedisBloom's BF and
CF flow tests use: Env (a connection to the server under test, RESP2 through
redis-py or RESP3 through a client of its own), its assertions, expect(), skip
and reload.

Assertions behave as RLTest's do: a failed assertion is recorded and the test
goes on; the test fails if any assertion failed or it raised. The runner
(../run.py) sets Env.server before it imports a test module and reads
Env.failures after each test.
"""
import contextlib
import socket

import redis
from redis.exceptions import ResponseError


class SkipTest(Exception):
    """Raised by Env.skip: the test does not apply to this server."""


class OutOfScope(Exception):
    """Raised when a test sends a command of a module outside the run's scope
    (CMS, TDIGEST, TOPK; CF until it is in scope): the test stops there."""

    def __init__(self, command):
        super().__init__(command)
        self.command = command


class Defaults:
    decode_responses = False


def _split_command(args):
    # redis-py splits a first argument that holds spaces ('CF.RESERVE a 9'):
    # the tests rely on it, so the RESP3 client does the same.
    if args and isinstance(args[0], str) and " " in args[0]:
        return tuple(args[0].split()) + tuple(args[1:])
    return tuple(args)


def _encode(a):
    if isinstance(a, bytes):
        return a
    if isinstance(a, (int, float)):
        return repr(a).encode() if isinstance(a, float) else str(a).encode()
    return str(a).encode("utf-8", "surrogateescape") if isinstance(a, str) else str(a).encode()


def _parse_info(text):
    # The same shape as redis-py's parse_info: "k:v" lines, numbers as numbers,
    # "a=1,b=2" values as dicts.
    def value(v):
        try:
            return int(v)
        except ValueError:
            try:
                return float(v)
            except ValueError:
                return v

    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        if "=" in v:
            d = {}
            for kv in v.split(","):
                if "=" in kv:
                    a, b = kv.split("=", 1)
                    d[a] = value(b)
            out[k] = d
        else:
            out[k] = value(v)
    return out


class Resp3Client:
    """A RESP3 connection (HELLO 3), decoding replies as redis-py 5 does with
    protocol=3: booleans, maps as dicts, doubles as floats, null as None."""

    def __init__(self, host, port, decode):
        self.decode = decode
        self.sock = socket.create_connection((host, port), timeout=60)
        self.buf = b""
        self.execute_command("HELLO", "3")

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.close()

    def execute_command(self, *args):
        args = _split_command(args)
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            e = _encode(a)
            out.append(b"$%d\r\n%s\r\n" % (len(e), e))
        self.sock.sendall(b"".join(out))
        reply = self._read()
        if isinstance(reply, ResponseError):
            raise reply
        if str(args[0]).upper() == "INFO":
            text = reply.decode() if isinstance(reply, bytes) else reply
            return _parse_info(text)
        return reply

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise redis.ConnectionError("connection closed by the server")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise redis.ConnectionError("connection closed by the server")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _str(self, b):
        return b.decode("utf-8", "replace") if self.decode else b

    def _read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return self._str(rest)
        if t in (b"-", b"!"):
            msg = rest.decode("utf-8", "replace") if t == b"-" else self._exact(int(rest)).decode()
            if msg.startswith("ERR "):
                msg = msg[4:]
            return ResponseError(msg)
        if t in (b":", b"("):
            return int(rest)
        if t == b",":
            return float(rest)
        if t == b"#":
            return rest == b"t"
        if t == b"_":
            return None
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._str(self._exact(n))
        if t == b"=":
            return self._str(self._exact(int(rest))[4:])
        if t in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        if t in (b"%", b"|"):
            d = {}
            for _ in range(int(rest)):
                k = self._read()
                d[k] = self._read()
            return d
        raise redis.ConnectionError("unknown RESP3 type %r" % t)


class _Query:
    """What Env.expect returns: the reply (or error) of one command, with
    RLTest's chained checks."""

    def __init__(self, env, args):
        self.env = env
        self.args = args
        self.res = None
        self.err = None
        try:
            self.res = env.cmd(*args)
        except ResponseError as e:
            self.err = e

    def _fail(self, what):
        self.env._record("%s: %s (reply %r, error %r)" % (self.args, what, self.res, self.err))
        return self

    def equal(self, want):
        if self.err is not None or self.res != want:
            self._fail("want %r" % (want,))
        return self

    def ok(self):
        if self.err is not None or self.res not in ("OK", b"OK", True):
            self._fail("want OK")
        return self

    def true(self):
        if self.err is not None or not self.res:
            self._fail("want a true reply")
        return self

    def noError(self):
        if self.err is not None:
            self._fail("want no error")
        return self

    def error(self):
        if self.err is None:
            self._fail("want an error")
        return self

    raiseError = error

    def contains(self, s):
        got = str(self.err) if self.err is not None else self.res
        if got is None or s not in got:
            self._fail("want it to contain %r" % (s,))
        return self


class Env:
    # Set by the runner: an object with host, port, reload(), scope (the
    # command prefixes in scope) and version.
    server = None
    failures = []
    assertions = 0
    commands_in_scope = 0
    _generation = 0  # bumped by reload: clients reconnect

    def __init__(self, decodeResponses=None, protocol=2, **_):
        if decodeResponses is None:
            decodeResponses = Defaults.decode_responses
        self.decode = decodeResponses
        self.protocol = protocol
        self._client = None
        self._gen = -1
        self.isCluster = lambda: False

    # --- connections
    def getConnection(self):
        if self._client is None or self._gen != Env._generation:
            if self._client is not None:
                with contextlib.suppress(Exception):
                    self._client.close()
            s = Env.server
            if self.protocol == 3:
                self._client = Resp3Client(s.host, s.port, self.decode)
            else:
                self._client = redis.Redis(host=s.host, port=s.port, decode_responses=self.decode,
                                           socket_timeout=60)
            self._gen = Env._generation
        return self._client

    @contextlib.contextmanager
    def getClusterConnectionIfNeeded(self):
        yield self.getConnection()

    def cmd(self, *args):
        args = _split_command(args)
        name = str(args[0] if not isinstance(args[0], bytes) else args[0].decode()).lower()
        if "." in name:
            if not any(name.startswith(p) for p in Env.server.scope):
                raise OutOfScope(name)
            Env.commands_in_scope += 1
        return self.getConnection().execute_command(*args)

    execute_command = cmd

    def expect(self, *args):
        return _Query(self, args)

    # --- control
    def skip(self):
        raise SkipTest("skipped by the test")

    def skipOnCluster(self):
        pass

    def skipOnSlave(self):
        pass

    def skipOnVersionSmaller(self, ver):
        from packaging import version
        have = self.getConnection().execute_command("INFO").get("redis_version", "0")
        if version.parse(str(have)) < version.parse(ver):
            raise SkipTest("server version %s < %s" % (have, ver))

    def dumpAndReload(self, *_, **__):
        Env.server.reload()
        Env._generation += 1

    restartAndReload = dumpAndReload
    retry_with_rdb_reload = dumpAndReload

    def debugPrint(self, *_, **__):
        pass

    # --- assertions (recorded, as RLTest's: the test goes on)
    def _record(self, msg):
        Env.failures.append(msg)

    def _check(self, ok, msg):
        Env.assertions += 1
        if not ok:
            self._record(msg)
        return ok

    def assertEqual(self, a, b, *_, **__):
        return self._check(a == b, "%r != %r" % (a, b))

    def assertNotEqual(self, a, b, *_, **__):
        return self._check(a != b, "%r == %r" % (a, b))

    def assertOk(self, v, *_, **__):
        return self._check(v in ("OK", b"OK", True), "%r is not OK" % (v,))

    def assertTrue(self, v, *_, **__):
        return self._check(bool(v), "%r is not true" % (v,))

    def assertFalse(self, v, *_, **__):
        return self._check(not v, "%r is not false" % (v,))

    def assertGreater(self, a, b, *_, **__):
        return self._check(a > b, "%r <= %r" % (a, b))

    def assertGreaterEqual(self, a, b, *_, **__):
        return self._check(a >= b, "%r < %r" % (a, b))

    def assertLess(self, a, b, *_, **__):
        return self._check(a < b, "%r >= %r" % (a, b))

    def assertLessEqual(self, a, b, *_, **__):
        return self._check(a <= b, "%r > %r" % (a, b))

    def assertAlmostEqual(self, a, b, delta=None, *_, **__):
        d = delta if delta is not None else 1e-7
        return self._check(abs(a - b) <= d, "%r !~ %r (delta %r)" % (a, b, d))

    def assertContains(self, a, b, *_, **__):
        return self._check(a in b, "%r not in %r" % (a, b))

    def assertRaises(self, exc, fn, *args, **kwargs):
        try:
            fn(*args, **kwargs)
        except OutOfScope:
            raise
        except exc:
            return self._check(True, "")
        except Exception as e:  # another error: RLTest counts it a failure
            return self._check(False, "%s%r raised %r, want %s" % (getattr(fn, "__name__", fn), args, e, exc.__name__))
        return self._check(False, "%s%r raised nothing, want %s" % (getattr(fn, "__name__", fn), args, exc.__name__))

    @contextlib.contextmanager
    def assertResponseError(self, msg=None, contained=None):
        try:
            yield
        except OutOfScope:
            raise
        except ResponseError as e:
            self._check(contained is None or contained in str(e), "error %r lacks %r" % (str(e), contained))
            return
        self._check(False, "no ResponseError raised%s" % (": " + msg if msg else ""))
