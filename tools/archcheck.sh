#!/usr/bin/env bash
# archcheck.sh: the layout rules of src/ (docs/architecture.md#the-layering-rule)
# checked on the sources, no build needed. One line per check, PASS, FAIL or
# SKIP, with the offenders under a failing one; ends with the tally line
# "N passed, N failed, N skipped" (the format of tests/unit/unit.h, which
# tests/run-all.sh adds up) and exits nonzero when a check failed.
#
# Invariants:
#  1. Every check prints exactly one PASS, FAIL or SKIP line and is counted
#     once in the tally.
#  2. Includes are resolved as the compiler resolves `#include "..."` with
#     -Isrc -Iinclude: the including file's directory first, then src/,
#     then include/; an include that resolves nowhere under the repository
#     (a system header) is no edge.
#  3. A file circle is found from the objects of the last build (nm: the
#     symbols a file defines and those it uses), so it sees calls through
#     include/rewind.h too; without objects the check is skipped, not passed.
#  4. A function's length is counted from the first line of its signature to
#     its closing brace: with the repository's .clang-format (Linux braces),
#     a function body opens with "{" alone at column 0 and closes with "}" at
#     column 0, and nothing else does.
#
# Usage: tools/archcheck.sh [MAXLINES]   (MAXLINES: longest function allowed, 120)
set -uo pipefail
cd "$(dirname "$0")/.."
MAXLINES=${1:-120}
if ! command -v python3 >/dev/null; then
    echo "SKIP archcheck: no python3"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
exec python3 - "$MAXLINES" <<'EOF'
import os, re, subprocess, sys

MAXLINES = int(sys.argv[1])
# The stages of src/ from the bottom (docs/architecture.md#the-layering-rule):
# a folder includes only from its own folder, from folders of a lower stage,
# and include/. Folders on one line are one stage (they may include each
# other's headers as long as no file circle results).
STAGES = [
    ["util"],
    ["input"],
    ["guestos"],
    ["vmm", "image", "store"],
    ["trace"],
    ["home"],
    ["archive"],
    ["run"],
    ["explore"],
    ["nix"],
    ["cli", "serve", "gdbstub"],
]
FRONT_ENDS = ["cli", "serve", "gdbstub"]
# The CLI is the program: it starts the other front ends through their entry
# headers (the Makefile's FE_CHECK allows the same two).
FRONT_END_ENTRIES = {"cli": ["src/serve/serve.h", "src/gdbstub/stub.h"]}
# Where KVM_RUN may be issued (issue 32: the one loop, the probe, the
# capture's one-shot completion).
KVM_RUN_DIRS = ["src/vmm/"]

stage_of = {d: i for i, names in enumerate(STAGES) for d in names}
passed = failed = skipped = 0


def report(ok, name, offenders=()):
    global passed, failed
    if ok:
        passed += 1
        print("PASS " + name)
    else:
        failed += 1
        print("FAIL " + name)
        for o in offenders:
            print("    " + o)


def sources():
    out = []
    for root, _, files in os.walk("src"):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.normpath(os.path.join(root, f)))
    return sorted(out)


SRC = sources()
text = {}
for p in SRC:
    with open(p, encoding="utf-8", errors="replace") as fh:
        text[p] = fh.read()


def strip_comments(s):
    # Comments and string literals out, line count kept.
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if s.startswith("/*", i):
            j = s.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * s.count("\n", i, j))
            i = j
        elif s.startswith("//", i):
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and s[j] != c and s[j] != "\n":
                j += 2 if s[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# (a) KVM_RUN only in src/vmm
bad = []
for p in SRC:
    for k, line in enumerate(strip_comments(text[p]).split("\n"), 1):
        if re.search(r"\bioctl\s*\(.*\bKVM_RUN\b", line) and not any(
            p.startswith(d) for d in KVM_RUN_DIRS
        ):
            bad.append("%s:%d" % (p, k))
report(not bad, "ioctl(KVM_RUN) only in %s" % ", ".join(KVM_RUN_DIRS), bad)

# (b) the longest function
funcs = []
for p in SRC:
    if not p.endswith(".c"):
        continue
    lines = strip_comments(text[p]).split("\n")
    i = 0
    while i < len(lines):
        if lines[i].rstrip() == "{":
            # the signature: back over the lines above up to a blank line, a
            # preprocessor line or the end of the previous declaration
            s = i - 1
            while s > 0:
                prev = lines[s - 1].rstrip()
                if not prev or prev.startswith("#") or prev.endswith((";", "}")):
                    break
                s -= 1
            e = i + 1
            while e < len(lines) and lines[e].rstrip() != "}":
                e += 1
            sig = " ".join(x.strip() for x in lines[s:i])
            m = re.search(r"(\w+)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$", sig)
            name = m.group(1) if m else sig[:40]
            funcs.append((e - s + 1, p, s + 1, name))
            i = e + 1
        else:
            i += 1
funcs.sort(key=lambda f: (-f[0], f[1], f[2]))
long_ = ["%s:%d: %s, %d lines" % (p, ln, name, n) for n, p, ln, name in funcs if n > MAXLINES]
top = funcs[0] if funcs else (0, "-", 0, "-")
report(
    not long_,
    "longest function at most %d lines (longest: %s, %d lines; %d functions)"
    % (MAXLINES, top[3], top[0], len(funcs)),
    long_,
)

# (c) include graph: no file circle, no upward include
INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def resolve(frm, name):
    for base in (os.path.dirname(frm), "src", "include"):
        q = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(q):
            return q
    return None


edges = {}
for p in SRC:
    edges[p] = []
    for m in INC.finditer(text[p]):
        q = resolve(p, m.group(1))
        if q and q != p:
            edges[p].append((q, m.group(1)))


def strong_components(graph):
    # Tarjan's strongly connected components; those of more than one node
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    nodes = sorted(set(graph) | {b for bs in graph.values() for b in bs})

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in nodes:
        if v not in index:
            strong(v)
    return sorted(comps)


def a_cycle(graph, comp):
    # one circle through the component's first node, for the reader
    cs, start = set(comp), comp[0]
    path, seen = [start], {start}

    def dfs(v):
        for w in sorted(graph.get(v, ())):
            if w == start and len(path) > 1:
                return True
            if w in cs and w not in seen:
                seen.add(w)
                path.append(w)
                if dfs(w):
                    return True
                path.pop()
        return False

    dfs(start)
    return " -> ".join(x[4:] for x in path + [start])


sys.setrecursionlimit(10000)
fedges = {p: {q for q, _ in qs if q.startswith("src/")} for p, qs in edges.items()}
circles = ["%d files: %s" % (len(c), a_cycle(fedges, c)) for c in strong_components(fedges)]
report(not circles, "no include circle between files of src", circles)

# (c') no file circle: file A uses a symbol file B defines and B (through
# others) one of A's, read from the objects of the last build (nm); the
# circles issue 32 names (home.c <-> runinfo.c, ...) are of this kind.
OBJ = "build/obj/src"
objs = sorted(
    os.path.join(r, f) for r, _, fs in os.walk(OBJ) for f in fs if f.endswith(".o")
) if os.path.isdir(OBJ) else []
objs = [o for o in objs if os.path.isfile(o[len("build/obj/"):-2] + ".c")]
if not objs or subprocess.run(["nm", "--version"], capture_output=True).returncode != 0:
    skipped += 1
    print("SKIP no file circle (calls between files): no build/obj/src objects or no nm")
else:
    defined, undefined = {}, {o[len("build/obj/"):-2] + ".c": set() for o in objs}
    objset = set(objs)
    # one nm for all: "object.o:[address] type name" per line (-A)
    out = subprocess.run(["nm", "-A"] + objs, capture_output=True, text=True).stdout
    for line in out.splitlines():
        obj, sep, rest = line.partition(".o:")
        if not sep or obj + ".o" not in objset:
            continue
        src = obj[len("build/obj/"):] + ".c"
        f = rest.split()
        if len(f) == 3 and f[1] in "TDBRGSVW":
            defined[f[2]] = src
        elif len(f) == 2 and f[0] == "U":
            undefined[src].add(f[1])
    cedges = {
        s: {defined[u] for u in us if u in defined and defined[u] != s}
        for s, us in undefined.items()
    }
    cc = ["%d files: %s" % (len(c), a_cycle(cedges, c)) for c in strong_components(cedges)]
    report(not cc, "no file circle (calls between files, from the objects in build/obj)", cc)

up = []
for p, qs in edges.items():
    fd = p.split("/")[1] if p.count("/") >= 2 else None
    for q, name in qs:
        if not q.startswith("src/"):
            continue
        td = q.split("/")[1]
        if fd == td or fd not in stage_of or td not in stage_of:
            if fd != td and (fd not in stage_of or td not in stage_of):
                up.append("%s -> %s: a folder without a stage" % (p, q))
            continue
        if stage_of[td] > stage_of[fd]:
            up.append("%s -> %s (%s is above %s)" % (p, q, td, fd))
report(not up, "no include from a lower stage to a higher one (%s)" %
       " < ".join("/".join(s) for s in STAGES), up)

# (d) front ends see include/ and their own folder only
fe = []
for p, qs in edges.items():
    fd = p.split("/")[1]
    if fd not in FRONT_ENDS:
        continue
    for q, name in qs:
        if not (
            q.startswith("include/")
            or os.path.dirname(q) == os.path.dirname(p)
            or q in FRONT_END_ENTRIES.get(fd, ())
        ):
            fe.append("%s includes %s (%s)" % (p, name, q))
report(not fe, "src/%s include only include/ and their own folder" % ",".join(FRONT_ENDS), fe)

print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
EOF
