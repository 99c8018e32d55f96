"""A stand-in for RedisBloom's `paella` (readies) module: common.py only asks it
for the platform's names, which the flow tests use to skip on some systems."""
import platform as _platform


class Platform:
    def __init__(self):
        self.os = _platform.system().lower()
        self.osnick = "linux"
        self.arch = _platform.machine()
