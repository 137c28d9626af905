#!/usr/bin/env python3
"""bench/distsim.py: a simulation of `rewind check --via slurm` at scale
(docs/distributed.md): S schedules on W worker slots (nodes x tasks per
node), sliced into tasks of K schedules each.

Model (every figure a parameter; the defaults are our measurements,
bench/RESULTS.md and bench/slurm.sh):
  - a task starts after the scheduler's dispatch latency (--dispatch-s),
    then imports the base run (--import-s: the replayable export, pulled
    once per task; --node-cache makes it once per node);
  - each schedule takes a log-normal time with median --sched-s and shape
    --sigma (one core per task);
  - a task dies with probability --p-fail at a uniform point of its run,
    is noticed at the coordinator's next squeue poll (--poll-s) and
    submitted once more (its finished schedules are kept); a second death
    loses its remaining schedules;
  - the coordinator imports each outcome's run one at a time
    (--ingest-s per schedule): a single-server queue.
It prints, per slice size K, the time to the last outcome, schedules per
minute, the coordinator's busy fraction, retries and lost schedules.
Deterministic: --seed.
"""
import argparse
import heapq
import math
import random


def simulate(a, k, rng):
    s, w = a.schedules, a.slots
    ntasks = math.ceil(s / k)
    tasks = [list(range(i, s, ntasks)) for i in range(ntasks)]  # interleaved slices
    free = [0.0] * w  # when each slot is free (a heap)
    heapq.heapify(free)
    nodes_warm = set()
    arrivals = []  # (time an outcome file appears)
    retries = lost = 0
    queue = [(0.0, t, 1) for t in range(ntasks)]  # (submit time, task, attempt)
    done = [0] * ntasks
    while queue:
        queue.sort()
        sub, t, att = queue.pop(0)
        slot_free = heapq.heappop(free)
        start = max(sub, slot_free) + a.dispatch_s
        node = rng.randrange(a.nodes)
        imp = 0.0 if (a.node_cache and node in nodes_warm) else a.import_s
        nodes_warm.add(node)
        now = start + imp
        times = [rng.lognormvariate(math.log(a.sched_s), a.sigma) for _ in tasks[t][done[t]:]]
        total = sum(times)
        dies = rng.random() < a.p_fail
        death = now + rng.random() * total if dies else None
        for d in times:
            if death is not None and now + d > death:
                break
            now += d
            arrivals.append(now)
            done[t] += 1
        if death is not None and done[t] < len(tasks[t]):
            end = death
            noticed = math.ceil(end / a.poll_s) * a.poll_s
            if att == 1:
                retries += 1
                queue.append((noticed, t, 2))
            else:
                lost += len(tasks[t]) - done[t]
        else:
            end = now
        heapq.heappush(free, end)
    # the coordinator: one import at a time, in arrival order
    arrivals.sort()
    c = busy = 0.0
    for t in arrivals:
        c = max(c, t) + a.ingest_s
        busy += a.ingest_s
    last = max(c, max(arrivals) if arrivals else 0.0)
    return last, len(arrivals), busy / last if last else 0.0, retries, lost


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--schedules", type=int, default=10000)
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument("--slots", type=int, default=0, help="task slots (default: one per node)")
    p.add_argument("--sched-s", type=float, default=10.5,
                   help="median seconds per schedule on one core (test host: 10.5)")
    p.add_argument("--sigma", type=float, default=0.3)
    p.add_argument("--dispatch-s", type=float, default=1.0)
    p.add_argument("--import-s", type=float, default=2.0)
    p.add_argument("--node-cache", action="store_true",
                   help="a node imports the base once for all its tasks")
    p.add_argument("--p-fail", type=float, default=0.01)
    p.add_argument("--poll-s", type=float, default=1.0)
    p.add_argument("--ingest-s", type=float, default=0.02,
                   help="coordinator seconds to import one outcome's run")
    p.add_argument("--slices", default="1,2,5,20,100")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    a.slots = a.slots or a.nodes
    print(f"{a.schedules} schedules, {a.nodes} nodes, {a.slots} slots, {a.sched_s} s/schedule "
          f"(sigma {a.sigma}), dispatch {a.dispatch_s} s, import {a.import_s} s"
          f"{' once per node' if a.node_cache else ' per task'}, p_fail {a.p_fail}, "
          f"ingest {a.ingest_s} s")
    ideal = a.schedules * a.sched_s / a.slots
    print(f"floor (work / slots): {ideal:.0f} s")
    print(f"{'K':>5} {'tasks':>6} {'last outcome s':>15} {'sched/min':>10} {'vs floor':>9} "
          f"{'coord busy':>10} {'retries':>8} {'lost':>5}")
    for k in (int(x) for x in a.slices.split(",")):
        rng = random.Random(a.seed)
        last, n, busy, retries, lost = simulate(a, k, rng)
        print(f"{k:>5} {math.ceil(a.schedules / k):>6} {last:>15.0f} {60 * n / last:>10.0f} "
              f"{last / ideal:>8.2f}x {100 * busy:>9.0f}% {retries:>8} {lost:>5}")


if __name__ == "__main__":
    main()
