// Command sample is a small Go program (with a little cgo, like etcd) for tests/unit/test_gobin.c:
// the test builds it offline, finds these functions through .gopclntab and checks every entry
// against the binary's .symtab and `go tool objdump`.
package main

// static int spectap_c_add(int a, int b) { return a + b; }
import "C"

import (
	"fmt"
	"os"
)

type counter struct{ n int }

//go:noinline
func (c *counter) incr(by int) int {
	c.n += by
	return c.n
}

// saved needs c after a call on every path: it saves c in its spill slot first.
//
//go:noinline
func (c *counter) saved(by int) int {
	fmt.Sprint(by)
	c.n += by
	return c.n
}

// savedLate returns before it saves c on one path.
//
//go:noinline
func (c *counter) savedLate(by int) int {
	if by == 0 {
		return 0
	}
	fmt.Sprint(by)
	c.n += by
	return c.n
}

//go:noinline
func add(a, b int) int { return a + b }

//go:noinline
func classify(x int) string {
	if x < 0 {
		return "negative"
	}
	if x == 0 {
		return "zero"
	}
	return "positive"
}

//go:noinline
func fail(msg string) { panic(msg) }

func main() {
	c := &counter{}
	c.incr(add(1, 2))
	c.saved(c.savedLate(len(os.Args) - 1))
	fmt.Println(classify(c.n), int(C.spectap_c_add(1, 2)))
	if len(os.Args) > 5 {
		fail("too many arguments")
	}
}
