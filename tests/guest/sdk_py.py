# sdk_py: every call of the Python SDK (guest/sdk/python/rewind.py), for
# t_sdk.sh. Its output is the same inside rewind and outside; "sdk_py.py
# fail" also fails an always and reaches an unreachable.
import sys
import threading

import rewind

fail = len(sys.argv) > 1 and sys.argv[1] == "fail"
rewind.mark("sdk_py starts")
a, b = rewind.random(), rewind.random()
print("random draws differ:", a != b)
counter = 0


def worker():
    global counter
    for _ in range(3):
        counter += 1
        rewind.always(counter > 0, "counter stays positive")
        rewind.point()


t = threading.Thread(target=worker)
t.start()
t.join()
r = rewind.sometimes(counter == 3, "counter reaches three")
rewind.always_or_unreachable(counter == 3, "counter is three at the end")
rewind.reachable("the end is reached")
if counter < 0:
    rewind.unreachable("counter went negative")
if fail:
    rewind.always(counter == 4, "counter is four on request")
    rewind.unreachable("the failure path")
print("counter %d, sometimes returned %s" % (counter, r))
