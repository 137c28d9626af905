// gocpus: a CPU-bound goroutine per CPU the program sees, with GOMAXPROCS
// at that number (issue 31, "N CPUs as the job sees them"; docs/determinism.md,
// "CPUs the job sees"). Under `rewind run --cpus 4` it must print 4 and
// finish, the same on every run: the runtime's idle Ms spin looking for
// work and its background workers preempt goroutines with signals.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

// work is CPU-bound: a xorshift walk over a buffer of its own, so it
// touches memory but makes no system call.
func work(seed uint64, n int) uint64 {
	buf := make([]uint64, 4096)
	x := seed | 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		buf[x%uint64(len(buf))] += x
	}
	var s uint64
	for _, v := range buf {
		s ^= v
	}
	return s
}

func main() {
	n := runtime.NumCPU()
	runtime.GOMAXPROCS(n)
	fmt.Printf("cpus %d gomaxprocs %d\n", n, runtime.GOMAXPROCS(0))
	sums := make([]uint64, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sums[i] = work(uint64(i+1), 200000)
		}(i)
	}
	wg.Wait()
	var all uint64
	for _, s := range sums {
		all ^= s
	}
	fmt.Printf("done %x\n", all)
	if n < 1 {
		os.Exit(1)
	}
}
