// hitloop: the probe target of bench/bench_etcd.c. One method, (*raft).Step, takes a message by
// value the way etcd 3.4's (*raft).Step and send take raftpb.Message (360 bytes, on the stack,
// receiver in RAX) and, calling a function, spills its receiver at rsp+368 as etcd's Step does,
// where the RET probe reads it. The structs mirror the field offsets the etcd probe set reads
// (systems/etcd/probes.c), so the bench attaches the same spec: the receiver's state through 0-3
// pointer hops and the message.
//
// Built offline (no module, no network):
//
//	cd bench/go/hitloop && GO111MODULE=off GOPROXY=off GOCACHE=/tmp/spectap-gocache go build -o hitloop .
//
// Usage:
//
//	hitloop -calls N [-reps R] [-pause D]       times R runs of N calls on one thread, a pause
//	                                            between runs (to let a collector drain), and
//	                                            prints "ns_per_call=<median> min=<min>
//	                                            cpu_ns_per_call=<median>" (wall clock, and the
//	                                            thread's CPU time, which a busy machine does not
//	                                            inflate: a probe hit's trap is charged to it)
//	hitloop -threads T -duration D [-rate H]    T threads call flat out (or H calls/s in all,
//	                                            paced) for D and print "calls=<n> seconds=<s>
//	                                            cpu_seconds=<the threads' CPU time>"
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Entry: etcd's raftpb.Entry is 72 bytes with Term at 0 and Index at 8.
type Entry struct {
	Term, Index uint64
	Type        int32
	Data        []byte
	Unrec       []byte
}

// Message: raftpb.Message's layout (360 bytes). An array field keeps it off the registers.
type Message struct {
	Type       int32
	To         uint64
	From       uint64
	Term       uint64
	LogTerm    uint64
	Index      uint64
	Entries    []Entry
	Commit     uint64
	Snapshot   [27]uint64
	Reject     bool
	RejectHint uint64
	Context    []byte
	Unrec      []byte
}

type memStorage struct {
	_    [34]uint64
	ents []Entry // at 272, as in etcd's MemoryStorage
}

type unstable struct {
	snapshot *uint64
	entries  []Entry
	offset   uint64
}

type raftLog struct {
	storage   interface{} // data word at 8: *memStorage
	unstable  unstable    // entries at 24, offset at 48
	_         [2]uint64
	committed uint64 // at 72
}

type raft struct {
	id, term, vote uint64
	_              [3]uint64
	log            *raftLog // at 48
	_              [10]uint64
	state          uint64 // at 136
	_              [4]uint64
	lead           uint64 // at 176
	steps          uint64
}

// The offsets bench_etcd.c's spec reads; a mismatch would make it read the wrong fields.
func checkLayout() {
	var m Message
	var r raft
	var l raftLog
	var s memStorage
	ok := unsafe.Sizeof(m) == 360 && unsafe.Offsetof(m.Entries) == 48 && unsafe.Offsetof(m.Commit) == 72 &&
		unsafe.Offsetof(m.Reject) == 296 && unsafe.Offsetof(m.RejectHint) == 304 && unsafe.Sizeof(Entry{}) == 72 &&
		unsafe.Offsetof(r.log) == 48 && unsafe.Offsetof(r.state) == 136 && unsafe.Offsetof(r.lead) == 176 &&
		unsafe.Offsetof(l.unstable)+unsafe.Offsetof(l.unstable.entries) == 24 &&
		unsafe.Offsetof(l.unstable)+unsafe.Offsetof(l.unstable.offset) == 48 && unsafe.Offsetof(l.committed) == 72 &&
		unsafe.Offsetof(s.ents) == 272
	if !ok {
		fmt.Fprintln(os.Stderr, "hitloop: struct layout differs from etcd's (bench_etcd.c reads those offsets)")
		os.Exit(1)
	}
}

//go:noinline
func account(r *raft) { r.steps++ }

// Step: a frame and a call, so its prologue is the usual stack check, like etcd's.
//
//go:noinline
func (r *raft) Step(m Message) *raft {
	if m.Term > r.term {
		r.term = m.Term
	}
	if m.Commit > r.log.committed {
		r.log.committed = m.Commit
	}
	account(r)
	return r
}

func newRaft() (*raft, Message) {
	st := &memStorage{ents: []Entry{{Term: 1, Index: 1}, {Term: 1, Index: 2}}}
	r := &raft{id: 1, term: 2, state: 2, lead: 1, log: &raftLog{storage: st, committed: 2}}
	r.log.unstable.offset = 3
	m := Message{Type: 3, To: 2, From: 1, Term: 2, LogTerm: 1, Index: 2, Commit: 2,
		Entries: []Entry{{Term: 2, Index: 3}}}
	return r, m
}

// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: exact, where getrusage counts in
// scheduler ticks); the goroutine must be locked to its thread.
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		fmt.Fprintln(os.Stderr, "hitloop: clock_gettime:", e)
		os.Exit(1)
	}
	return time.Duration(ts.Nano())
}

func loop(r *raft, m Message, n int) {
	for i := 0; i < n; i++ {
		m.Index = uint64(i)
		r = r.Step(m)
	}
}

// One thread: reps timed runs of calls each; median and min ns per call.
func timed(calls, reps int, pause time.Duration) {
	runtime.LockOSThread()
	r, m := newRaft()
	loop(r, m, 1000) // page in, warm up
	ns := make([]float64, 0, reps)
	cpu := make([]float64, 0, reps)
	for k := 0; k < reps; k++ {
		time.Sleep(pause)
		t, c := time.Now(), threadCPU()
		loop(r, m, calls)
		cpu = append(cpu, float64((threadCPU()-c).Nanoseconds())/float64(calls))
		ns = append(ns, float64(time.Since(t).Nanoseconds())/float64(calls))
	}
	sort.Float64s(ns)
	sort.Float64s(cpu)
	fmt.Printf("ns_per_call=%.1f min=%.1f cpu_ns_per_call=%.1f calls=%d reps=%d\n", ns[len(ns)/2], ns[0],
		cpu[len(cpu)/2], calls, reps)
}

// threads goroutines on their own threads for d; rate > 0 paces them (rate/threads each, in
// batches of 64 calls, sleeping when ahead).
func load(threads int, d time.Duration, rate float64) {
	var total, cpuNs int64
	var wg sync.WaitGroup
	start := time.Now()
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			c0 := threadCPU()
			r, m := newRaft()
			n := 0
			per := rate / float64(threads)
			for {
				loop(r, m, 64)
				n += 64
				el := time.Since(start)
				if el >= d {
					break
				}
				if per > 0 {
					due := time.Duration(float64(n) / per * 1e9)
					if due > el {
						time.Sleep(due - el)
					}
				}
			}
			atomic.AddInt64(&total, int64(n))
			atomic.AddInt64(&cpuNs, int64(threadCPU()-c0))
		}()
	}
	wg.Wait()
	fmt.Printf("calls=%d seconds=%.3f cpu_seconds=%.3f\n", total, time.Since(start).Seconds(), float64(cpuNs)/1e9)
}

func main() {
	calls := flag.Int("calls", 0, "timed mode: calls per run")
	reps := flag.Int("reps", 9, "timed mode: runs")
	pause := flag.Duration("pause", 100*time.Millisecond, "timed mode: pause before each run")
	threads := flag.Int("threads", 1, "load mode: threads")
	dur := flag.Duration("duration", 2*time.Second, "load mode: how long")
	rate := flag.Float64("rate", 0, "load mode: calls per second in all (0: flat out)")
	flag.Parse()
	checkLayout()
	if *threads > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(*threads)
	}
	if *calls > 0 {
		timed(*calls, *reps, *pause)
	} else {
		load(*threads, *dur, *rate)
	}
}
