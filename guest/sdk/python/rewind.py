"""rewind: the in-guest SDK for Python programs that run inside a rewind VM.

Pure Python, standard library only. It speaks the line protocol of
docs/sdk.md on /dev/rewind; outside rewind (no /dev/rewind) every call is a
cheap no-op, and the assertions still return their condition.

    import rewind
    rewind.always(n >= 0, "count never negative")
    rewind.always_or_unreachable(ok, "reply well formed")
    rewind.sometimes(n == 3, "queue reaches three")
    rewind.reachable("retry path taken")
    rewind.unreachable("lost an update")
    rewind.point()      # a schedule point
    rewind.random()     # 64 bits from the run's seed (getrandom)
    rewind.mark("reached phase 2")

Source locations are the caller's frame (file and line). The catalog: at
import, the main script's source is read and every call of an assertion
with a literal message is catalogued; a module's calls are catalogued the
first time that module calls the SDK. So an assertion never reached is
still known, as long as its message is a string literal.

Invariants:
 1. One protocol line is one os.write of at most 4000 bytes, so it reaches
    the trace as one mark record.
 2. File names are cut to 255 bytes and messages to 1023 (UTF-8) before
    every byte below 0x21, 0x7f and '%' is escaped as %XX.
 3. Each source file is scanned for its catalog at most once per process,
    and only inside rewind.
"""

import ast
import os
import sys
import threading

__all__ = ["always", "always_or_unreachable", "sometimes", "reachable",
           "unreachable", "point", "random", "mark"]

_KINDS = ("always", "always_or_unreachable", "sometimes", "reachable",
          "unreachable")
_MSG_ARG = {"always": 1, "always_or_unreachable": 1, "sometimes": 1,
            "reachable": 0, "unreachable": 0}

_lock = threading.Lock()
_fd = None          # None: not opened yet; -1: no /dev/rewind
_scanned = set()


def _device():
    global _fd
    if _fd is None:
        with _lock:
            if _fd is None:
                path = os.environ.get("REWIND_SDK_DEVICE") or "/dev/rewind"
                try:
                    _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
                except OSError:
                    _fd = -1
    return _fd


def _escape(s, limit):
    b = s.encode("utf-8", "surrogateescape")[:limit]
    out = bytearray()
    for c in b:
        if c <= 0x20 or c == 0x7F or c == 0x25:
            out += b"%%%02X" % c
        else:
            out.append(c)
    return bytes(out)


def _line(fd, verb, kind, result, file, line, msg):
    parts = [b"rw1", verb.encode()]
    if kind is not None:
        parts.append(kind.encode())
    if result is not None:
        parts.append(b"1" if result else b"0")
    parts.append(_escape(file, 255))
    parts.append(str(max(0, int(line))).encode())
    if msg is not None:
        parts.append(_escape(str(msg), 1023))
    try:
        os.write(fd, b" ".join(parts) + b"\n")
    except OSError:
        pass


def _catalog_calls(tree):
    """(kind, line, msg) of each SDK assertion call with a literal message."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else (
            f.id if isinstance(f, ast.Name) else None)
        if name not in _MSG_ARG:
            continue
        i = _MSG_ARG[name]
        arg = node.args[i] if len(node.args) > i else None
        for kw in node.keywords:
            if kw.arg == "msg":
                arg = kw.value
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            yield name, node.lineno, arg.value


def _scan(fd, file):
    with _lock:
        if file in _scanned:
            return
        _scanned.add(file)
    try:
        with open(file, "rb") as f:
            tree = ast.parse(f.read(), file)
    except (OSError, SyntaxError, ValueError):
        return
    for kind, line, msg in sorted(_catalog_calls(tree), key=lambda t: t[1]):
        _line(fd, "cat", kind, None, file, line, msg)


def _hit(kind, cond, msg):
    fd = _device()
    if fd < 0:
        return cond
    frame = sys._getframe(2)
    file, line = frame.f_code.co_filename, frame.f_lineno
    if file not in _scanned:
        _scan(fd, file)
    _line(fd, "hit", kind, bool(cond), file, line, msg)
    return cond


def always(cond, msg):
    """Assert that cond is true every time it is evaluated."""
    return _hit("always", cond, msg)


def always_or_unreachable(cond, msg):
    """always, but never reaching it is no failure either."""
    return _hit("always_or_unreachable", cond, msg)


def sometimes(cond, msg):
    """Assert that cond is true at least once across a check."""
    return _hit("sometimes", cond, msg)


def reachable(msg):
    """Assert that this line is reached at least once across a check."""
    _hit("reachable", True, msg)


def unreachable(msg):
    """Assert that this line is never reached."""
    _hit("unreachable", False, msg)


def point():
    """A schedule point: a step at which schedules may switch threads."""
    fd = _device()
    if fd >= 0:
        frame = sys._getframe(1)
        _line(fd, "point", None, None, frame.f_code.co_filename,
              frame.f_lineno, None)


def random():
    """64 random bits from getrandom(2), which rewind seeds from the run's
    seed (the same numbers in a replay, others with another --seed)."""
    get = getattr(os, "getrandom", None)
    b = get(8) if get else os.urandom(8)
    return int.from_bytes(b, "little")


def mark(msg):
    """Write one mark (a line of text) into the run's trace."""
    fd = _device()
    if fd >= 0:
        try:
            os.write(fd, str(msg).encode("utf-8", "surrogateescape"))
        except OSError:
            pass


def _catalog_main():
    main = sys.modules.get("__main__")
    file = getattr(main, "__file__", None)
    if file and _device() >= 0:
        _scan(_fd, file)


_catalog_main()
