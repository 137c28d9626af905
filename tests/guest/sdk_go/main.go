// sdk_go: every call of the Go SDK (guest/sdk/go/rewind), for t_sdk.sh.
// Its output is the same inside rewind and outside; "sdk_go fail" also
// fails an Always and reaches an Unreachable.
package main

import (
	"fmt"
	"os"
	"sync"

	"rewind.local/sdk/rewind"
)

var _ = rewind.Declare(rewind.KindUnreachable, "counter went negative")

func main() {
	fail := len(os.Args) > 1 && os.Args[1] == "fail"
	rewind.Mark("sdk_go starts")
	a, b := rewind.Random(), rewind.Random()
	fmt.Printf("random draws differ: %v\n", a != b)
	counter := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			counter++
			rewind.Always(counter > 0, "counter stays positive")
			rewind.Point()
		}
	}()
	wg.Wait()
	r := rewind.Sometimes(counter == 3, "counter reaches three")
	rewind.AlwaysOrUnreachable(counter == 3, "counter is three at the end")
	rewind.Reachable("the end is reached")
	if counter < 0 {
		rewind.Unreachable("counter went negative")
	}
	if fail {
		rewind.Always(counter == 4, "counter is four on request")
		rewind.Unreachable("the failure path")
	}
	fmt.Printf("counter %d, sometimes returned %v\n", counter, r)
}
