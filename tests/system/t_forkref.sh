# Forks that cost what they add (issue 17, item 5; src/trace/trace.h,
# version 2): a fork's trace refers to its parent's prefix instead of
# copying it, and every reader, export/import and remove follow the
# reference. The negative twin: a parent changed under a fork is detected
# (the fork's trace is refused, never read mixed).

# trace_header FILE: "VERSION PARENT" of a trace file.
trace_header() { python3 - "$1" <<'PY'
import struct, sys
h = open(sys.argv[1], "rb").read(96)
v = struct.unpack_from("<I", h, 8)[0]
print(v, h[16:56].split(b"\0")[0].decode() if v == 2 else "-")
PY
}

# forkref_setup N: a parent run printing N lines (ID, STEPS) and its fork
# 10 steps before its end under schedule 1 (AT, FID).
forkref_setup() {
    run_rw a run --root "$ROOT" --keyframe-every 64 -- \
        sh -c "i=0; while [ \$i -lt $1 ]; do echo \"line \$i of the parent\"; i=\$((i+1)); done"
    expect_rc 0
    ID=$(run_id a.err)
    STEPS=$(steps_of a.err)
    AT=$((STEPS - 10))
    run_rw f fork "$ID" $AT --schedule 1
    expect_rc 0
    FID=$(run_id f.err)
}

# tier: long
test_fork_refers_to_its_parent_prefix() {
    forkref_setup 400
    local id=$ID at=$AT fid=$FID
    [ "$(trace_header "$REWIND_HOME/runs/$fid/trace")" = "2 $id" ] ||
        fail "the fork's trace does not refer to $id: $(trace_header "$REWIND_HOME/runs/$fid/trace")"
    local ps fs
    ps=$(stat -c %s "$REWIND_HOME/runs/$id/trace"); fs=$(stat -c %s "$REWIND_HOME/runs/$fid/trace")
    [ "$fs" -lt $((ps / 4)) ] || fail "the fork's trace is $fs bytes, its parent's $ps"
    # the readers see the parent's history through the fork's step
    run_rw ea events "$id" --to $at; expect_rc 0
    run_rw ef events "$fid" --to $at; expect_rc 0
    cmp -s ea.out ef.out || fail "events up to step $at differ: $(diff ea.out ef.out | head -n 4 | tr '\n' '|')"
    run_rw l log "$fid"; expect_rc 0
    expect_grep l.out 'line 0 of the parent'
    run_rw p ps "$fid" $at; expect_rc 0
    run_rw d diff "$id" "$fid"
    [ "$RC" -le 1 ] || fail "diff: $(tail -n 2 d.err)"
    run_rw r replay "$fid" --from $at
    expect_rc 0
    expect_grep r.out identical
    # an archive stands alone: imported into an empty home without the
    # parent, the fork's events are the same
    run_rw x export "$fid" -o "$T/f.rewind"; expect_rc 0
    REWIND_HOME=$T/h2 run_rw i import "$T/f.rewind"
    [ "$RC" -eq 0 ] || fail "import: $(cat i.out i.err)"
    REWIND_HOME=$T/h2 run_rw e2 events "$fid"; expect_rc 0
    run_rw e1 events "$fid"; expect_rc 0
    cmp -s e1.out e2.out || fail "the imported fork's events differ"
    # a replayable archive carries the parent; the fork replays there
    run_rw xr export "$fid" --replayable -o "$T/fr.rewind"; expect_rc 0
    REWIND_HOME=$T/h3 run_rw ir import "$T/fr.rewind"
    [ "$RC" -eq 0 ] || fail "import --replayable: $(cat ir.out ir.err)"
    REWIND_HOME=$T/h3 run_rw r3 replay "$fid" --from $at
    [ "$RC" -eq 0 ] || fail "replay after import: $(cat r3.out r3.err)"
    # the parent is kept while the fork builds on it; forced away, the fork
    # gets a trace of its own first
    run_rw rm remove "$id"
    [ "$RC" -ne 0 ] || fail "the parent of a fork was removed without --force"
    run_rw rf remove --force "$id"; expect_rc 0
    [ "$(trace_header "$REWIND_HOME/runs/$fid/trace")" = "1 -" ] || fail "the fork still refers to a removed run"
    run_rw e3 events "$fid"; expect_rc 0
    cmp -s e1.out e3.out || fail "the fork's events changed when its parent went"
}

# tier: vm
test_a_changed_parent_is_detected() {
    forkref_setup 100
    local id=$ID fid=$FID
    run_rw e1 events "$fid"; expect_rc 0
    # change one output byte of the parent's first record, crc kept valid:
    # only the prefix hash can tell
    python3 - "$REWIND_HOME/runs/$id/trace" <<'PY'
import struct, sys, zlib
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
off = 16
while off < len(b):
    step, = struct.unpack_from("<Q", b, off)
    ln, kind = struct.unpack_from("<IH", b, off + 16)
    if kind == 2 and ln > 24:  # REWIND_REC_OUTPUT
        b[off + 16 + 24] ^= 1
        crc = zlib.crc32(bytes(b[off + 16:off + 16 + ln]), zlib.crc32(bytes(b[off:off + 8])))
        struct.pack_into("<I", b, off + 8, crc)
        break
    off += (16 + ln + 7) & ~7
open(p, "wb").write(b)
PY
    run_rw e2 events "$fid"
    [ "$RC" -ne 0 ] || fail "the fork read a changed parent: $(head -n 2 e2.out | tr '\n' '|')"
}
