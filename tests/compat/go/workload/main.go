// Go workload of the compatibility suite (tests/compat/README.md): goroutines
// over channels, timers, a CPU-bound phase on 4 goroutines, and a net/http
// server and client on localhost. Prints only order-independent results.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

func pipeline() {
	src := make(chan int)
	sq := make(chan int, 4)
	go func() {
		for i := 1; i <= 100; i++ {
			src <- i
		}
		close(src)
	}()
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range src {
				sq <- v * v
			}
		}()
	}
	go func() { wg.Wait(); close(sq) }()
	sum := 0
	for v := range sq {
		sum += v
	}
	fmt.Println("channels: sum of squares", sum)
}

func timers() {
	t := time.NewTimer(20 * time.Millisecond)
	tick := time.NewTicker(2 * time.Millisecond)
	ticks := 0
	start := time.Now()
loop:
	for {
		select {
		case <-tick.C:
			ticks++
		case <-t.C:
			break loop
		}
	}
	tick.Stop()
	slept := time.Since(start) >= 20*time.Millisecond
	select {
	case <-time.After(5 * time.Millisecond):
		fmt.Println("timers: timer fired after >= 20ms:", slept, "ticker ticked:", ticks > 0)
	case <-time.After(time.Second):
		fmt.Println("timers: wrong timer")
	}
}

func isPrime(n int) bool {
	if n < 2 {
		return false
	}
	for d := 2; d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

func cpuBound() {
	const limit = 200000
	counts := make([]int, 4)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := g; n < limit; n += 4 {
				if isPrime(n) {
					counts[g]++
				}
			}
		}(g)
	}
	wg.Wait()
	fmt.Println("cpu: primes below", limit, "per goroutine", counts, "total", counts[0]+counts[1]+counts[2]+counts[3])
}

func httpRoundTrip() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("http: listen:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", r.URL.Path)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	port := ln.Addr().(*net.TCPAddr).Port
	var bodies []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := http.Get(fmt.Sprintf("http://localhost:%d/req%d", port, i))
			if err != nil {
				mu.Lock()
				bodies = append(bodies, "error: "+err.Error())
				mu.Unlock()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			bodies = append(bodies, fmt.Sprintf("%d %s", resp.StatusCode, string(b[:len(b)-1])))
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	srv.Close()
	sort.Strings(bodies)
	fmt.Println("http:", bodies)
}

func main() {
	pipeline()
	timers()
	cpuBound()
	httpRoundTrip()
	fmt.Println("go: ok")
}
