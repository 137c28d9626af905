// Package rewind is the in-guest SDK for Go programs that run inside a
// rewind VM. It speaks the line protocol of docs/sdk.md on /dev/rewind;
// outside rewind (no /dev/rewind) every call is a cheap no-op, and the
// assertions still return their condition.
//
//	rewind.Always(n >= 0, "count never negative")
//	rewind.AlwaysOrUnreachable(ok, "reply well formed")
//	rewind.Sometimes(n == 3, "queue reaches three")
//	rewind.Reachable("retry path taken")
//	rewind.Unreachable("lost an update")
//	rewind.Point()   // a schedule point
//	rewind.Random()  // 64 bits from the run's seed (getrandom)
//	rewind.Mark("reached phase 2")
//
// Source locations come from runtime.Caller (build with -trimpath for
// paths that do not name the build machine). Go keeps no source at run
// time, so an assertion is catalogued when it is first evaluated; one that
// may never be reached is catalogued at program start by declaring it in a
// package-level variable:
//
//	var _ = rewind.Declare(rewind.KindUnreachable, "lost an update")
//
// Invariants:
//  1. One protocol line is one write(2) of at most 4000 bytes, so it
//     reaches the trace as one mark record.
//  2. File names are cut to 255 bytes and messages to 1023 before every
//     byte below 0x21, 0x7f and '%' is escaped as %XX.
//  3. Each (kind, message) is catalogued at most once per process.
package rewind

import (
	"crypto/rand"
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"sync"
)

// Kind is an assertion's kind.
type Kind int

const (
	KindAlways Kind = iota
	KindAlwaysOrUnreachable
	KindSometimes
	KindReachable
	KindUnreachable
)

var kindWords = [...]string{"always", "always_or_unreachable", "sometimes", "reachable", "unreachable"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindWords) {
		return kindWords[k]
	}
	return "always"
}

type key struct {
	kind Kind
	msg  string
}

var (
	once    sync.Once
	dev     *os.File
	mu      sync.Mutex
	catalog = map[key]bool{}
)

func device() *os.File {
	once.Do(func() {
		path := os.Getenv("REWIND_SDK_DEVICE") // a test may point it at a file
		if path == "" {
			path = "/dev/rewind"
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			dev = f
		}
	})
	return dev
}

func escape(b []byte, s string, max int) []byte {
	const hex = "0123456789ABCDEF"
	if len(s) > max {
		s = s[:max]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || c == '%' {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return b
}

// line writes "rw1 VERB [KIND] [RESULT] FILE LINE [MSG]\n" in one write.
func line(f *os.File, verb string, kind Kind, result int, file string, ln int, msg *string) {
	b := make([]byte, 0, 256)
	b = append(b, "rw1 "...)
	b = append(b, verb...)
	if verb != "point" {
		b = append(b, ' ')
		b = append(b, kind.String()...)
	}
	if result >= 0 {
		b = append(b, ' ', byte('0'+result))
	}
	b = append(b, ' ')
	b = escape(b, file, 255)
	b = append(b, ' ')
	if ln < 0 {
		ln = 0
	}
	b = strconv.AppendUint(b, uint64(ln), 10)
	if msg != nil {
		b = append(b, ' ')
		b = escape(b, *msg, 1023)
	}
	b = append(b, '\n')
	f.Write(b)
}

func caller(skip int) (string, int) {
	_, file, ln, ok := runtime.Caller(skip + 1)
	if !ok {
		return "?", 0
	}
	return file, ln
}

// catalogue emits the catalog line of (kind, msg) once per process.
func catalogue(f *os.File, kind Kind, msg string, file string, ln int) {
	k := key{kind, msg}
	mu.Lock()
	seen := catalog[k]
	catalog[k] = true
	mu.Unlock()
	if !seen {
		line(f, "cat", kind, -1, file, ln, &msg)
	}
}

// Declare catalogues an assertion at program start (use it in a
// package-level var), so that it is known even if never evaluated.
func Declare(kind Kind, msg string) bool {
	if f := device(); f != nil {
		file, ln := caller(1)
		catalogue(f, kind, msg, file, ln)
	}
	return true
}

func hit(kind Kind, cond bool, msg string) bool {
	f := device()
	if f == nil {
		return cond
	}
	file, ln := caller(2)
	catalogue(f, kind, msg, file, ln)
	r := 0
	if cond {
		r = 1
	}
	line(f, "hit", kind, r, file, ln, &msg)
	return cond
}

// Always asserts that cond is true every time it is evaluated.
func Always(cond bool, msg string) bool { return hit(KindAlways, cond, msg) }

// AlwaysOrUnreachable is Always, but not reaching it is no failure either.
func AlwaysOrUnreachable(cond bool, msg string) bool {
	return hit(KindAlwaysOrUnreachable, cond, msg)
}

// Sometimes asserts that cond is true at least once across a check.
func Sometimes(cond bool, msg string) bool { return hit(KindSometimes, cond, msg) }

// Reachable asserts that this line is reached at least once across a check.
func Reachable(msg string) { hit(KindReachable, true, msg) }

// Unreachable asserts that this line is never reached.
func Unreachable(msg string) { hit(KindUnreachable, false, msg) }

// Point is a schedule point: a step at which schedules may switch threads.
func Point() {
	if f := device(); f != nil {
		file, ln := caller(1)
		line(f, "point", 0, -1, file, ln, nil)
	}
}

// Random returns 64 bits from getrandom(2), which rewind seeds from the
// run's seed.
func Random() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// Mark writes one mark (a line of text) into the run's trace.
func Mark(msg string) {
	if f := device(); f != nil {
		f.Write([]byte(msg))
	}
}
