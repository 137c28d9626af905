#!/usr/bin/env python3
"""bench/serve_idle.py [N]: rewind serve under idle connections (issue 27,
finding 10; docs/serve.md, "Connections: idle and slow clients").

Starts build/rewind serve on an empty home, opens N idle connections
(default 5000: no byte sent, as many as connect), then times three requests
for the run list on new connections, one more on a keep-alive connection
after 5 s of quiet, and counts how many idle connections serve still holds
open. Needs no KVM. Prints one line per figure. REWIND=path: another
build of rewind (a request not answered in 20 s is said so)."""
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))
home = tempfile.mkdtemp(prefix="rwserve-idle.")
srv = subprocess.Popen([os.environ.get("REWIND", TOP + "/build/rewind"), "serve", "--port", "0"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, env=dict(os.environ, REWIND_HOME=home))
try:
    m = re.match(r"http://127.0.0.1:(\d+)/([0-9a-f]+)/", srv.stdout.readline().decode())
    port, token = int(m[1]), m[2]

    def ask(s=None):
        t = time.time()
        try:
            s = s or socket.create_connection(("127.0.0.1", port))
            s.settimeout(20)
            s.sendall(f"GET /{token}/api/runs HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            status = s.recv(4096)[:12].decode() or "closed without an answer"
        except socket.timeout:
            status = "no answer within 20 s"
        except OSError as e:
            status = f"no answer: {e.strerror}"
        return (time.time() - t) * 1000, status, s

    idle, t0 = [], time.time()
    for _ in range(n):
        try:
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            break
    print(f"idle connections opened: {len(idle)} in {time.time() - t0:.2f} s")
    for i in range(3):
        ms, status, s = ask()
        print(f"request {i + 1} on a new connection: {ms:.1f} ms ({status})")
    time.sleep(5)
    ms, status, _ = ask(s)
    print(f"request on a keep-alive connection after 5 s: {ms:.1f} ms ({status})")
    held = 0
    for c in idle:
        c.setblocking(False)
        try:
            held += c.recv(1) != b""
        except BlockingIOError:
            held += 1
        except OSError:
            pass
    print(f"idle connections serve still holds: {held}")
finally:
    srv.terminate()
    srv.wait()
    subprocess.run(["rm", "-rf", home])
