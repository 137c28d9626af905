#!/bin/sh
# The upstream suite: a subset of CPython 3.11's own regression tests, as
# Debian's libpython3.11-testsuite ships them, run with unittest. Prints the
# test count and result without the (virtual) duration, then the pass count.
set -e
mods="test_bisect test_functools test_abc test_contextlib"
set +e
python3 -m unittest -q $(for m in $mods; do echo "test.$m"; done) >/tmp/upstream.log 2>&1
rc=$?
set -e
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' /tmp/upstream.log)
skipped=$(sed -n 's/^OK (skipped=\([0-9]*\))$/\1/p' /tmp/upstream.log)
grep -v '^Ran [0-9]* tests\{0,1\} in ' /tmp/upstream.log | grep -v '^$' || true
echo "cpython 3.11 regression tests ($mods): ran ${ran:-0}, skipped ${skipped:-0}, passed $(( ${ran:-0} - ${skipped:-0} )), unittest exit $rc"
exit $rc
