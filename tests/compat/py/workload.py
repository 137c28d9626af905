"""Python workload of the compatibility suite (tests/compat/README.md).

Threads with locks and random sleeps, asyncio with timeouts, a subprocess
pipeline, multiprocessing, and a TCP echo server, a UDP exchange and an HTTP
round trip over localhost. Prints only results that do not depend on the
order threads ran in, so every schedule must print the same lines.
"""
import asyncio
import http.server
import multiprocessing
import random
import socket
import socketserver
import subprocess
import threading
import time
import urllib.request


def threads_with_locks():
    lock = threading.Lock()
    cond = threading.Condition()
    state = {"count": 0, "queue": [], "done": 0}

    def worker(n):
        rng = random.Random(n)
        for _ in range(20):
            time.sleep(rng.random() / 1000)
            with lock:
                state["count"] += 1
        with cond:
            state["queue"].append(n * n)
            state["done"] += 1
            cond.notify_all()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    with cond:
        cond.wait_for(lambda: state["done"] == 4, timeout=60)
    for t in ts:
        t.join()
    print("threads: count", state["count"], "squares", sorted(state["queue"]))


async def asyncio_with_timeouts():
    async def job(delay, value):
        await asyncio.sleep(delay)
        return value

    fast = await asyncio.wait_for(job(0.01, "fast"), timeout=1.0)
    try:
        await asyncio.wait_for(job(5.0, "slow"), timeout=0.05)
        slow = "finished?"
    except asyncio.TimeoutError:
        slow = "timed out"
    q = asyncio.Queue()

    async def producer():
        for i in range(20):
            await q.put(i)
            await asyncio.sleep(0.001)
        await q.put(None)

    async def consumer():
        total = 0
        while (item := await q.get()) is not None:
            total += item
        return total

    _, total = await asyncio.gather(producer(), consumer())
    print("asyncio:", fast, slow, "queue sum", total)


def subprocess_pipeline():
    p1 = subprocess.Popen(["printf", "pear\\napple\\nfig\\napple\\npear\\napple\\n"],
                          stdout=subprocess.PIPE)
    p2 = subprocess.Popen(["sort"], stdin=p1.stdout, stdout=subprocess.PIPE)
    p1.stdout.close()
    p3 = subprocess.Popen(["uniq", "-c"], stdin=p2.stdout, stdout=subprocess.PIPE, text=True)
    p2.stdout.close()
    out, _ = p3.communicate()
    rcs = [p1.wait(), p2.wait(), p3.returncode]
    print("pipeline:", " | ".join(" ".join(line.split()) for line in out.splitlines()), "rcs", rcs)
    r = subprocess.run("echo from-sh && exit 3", shell=True, capture_output=True, text=True)
    print("shell:", r.stdout.strip(), "rc", r.returncode)


def square(x):
    return x * x


def multiprocessing_pool():
    with multiprocessing.Pool(2) as pool:
        squares = pool.map(square, range(20))
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=q.put, args=(i * 10,)) for i in range(2)]
    for p in ps:
        p.start()
    got = sorted(q.get(timeout=60) for _ in ps)
    for p in ps:
        p.join()
    print("multiprocessing: sum of squares", sum(squares), "from processes", got,
          "exit codes", [p.exitcode for p in ps])


class Echo(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            self.wfile.write(line.upper())


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("hello from %s\n" % self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def sockets_on_localhost():
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo) as srv:
        threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
        replies = []
        for i in range(2):
            with socket.create_connection(srv.server_address) as c:
                f = c.makefile("rwb")
                f.write(b"line %d\n" % i)
                f.flush()
                c.shutdown(socket.SHUT_WR)
                replies.append(f.read().decode().strip())
        srv.shutdown()
    print("tcp echo:", replies)
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as a, \
            socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as b:
        a.bind(("::1", 0))
        b.sendto(b"ping6", a.getsockname())
        data, _ = a.recvfrom(100)
    print("udp6:", data.decode())
    with http.server.ThreadingHTTPServer(("localhost", 0), Hello) as srv:
        threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
        url = "http://localhost:%d/compat" % srv.server_address[1]
        with urllib.request.urlopen(url, timeout=30) as r:
            print("http:", r.status, r.read().decode().strip())
        srv.shutdown()


if __name__ == "__main__":
    threads_with_locks()
    asyncio.run(asyncio_with_timeouts())
    subprocess_pipeline()
    multiprocessing_pool()
    sockets_on_localhost()
    print("python: ok")
