// putload: a put load for an etcd 3.4 cluster, built offline against Debian's packaged client
// (golang-etcd-server-dev):
//
//	cd tools/go/putload && GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off go build -o putload .
//
// Usage:
//
//	putload --endpoints 127.0.0.1:P,... (--count N | --duration D) [--concurrency C]
//	        [--prefix K] [--value-size B] [--timeout T] [--json] [--acked FILE]
//
// Puts keys <prefix><i>, i = 0, 1, ..., each once, from C goroutines sharing one client. A put
// that fails or times out (T per put) is counted, not retried, and the load goes on until N puts
// were issued or D has passed. SIGINT or SIGTERM ends it early (in-flight puts count as failed).
//
// Each acknowledged put is written, as it is acked, to FILE (or stdout without --acked): one
// line "key rev ms", or with --json one JSON object {"key":"...","rev":R,"ms":latency}. The
// last line of stdout is one JSON summary:
//
//	{"puts":N,"acked":A,"failed":F,"seconds":S,"per_second":X,"p50_ms":..,"p99_ms":..}
//
// plus "first_error" when a put failed. Latencies are of acked puts. Exit status: 0 when the
// load ran (whatever failed), 1 when it could not run (client, acked file), 2 on a usage error.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/pkg/logutil"
	"go.uber.org/zap"
)

type summary struct {
	Puts       int64   `json:"puts"`
	Acked      int64   `json:"acked"`
	Failed     int64   `json:"failed"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"per_second"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	FirstError string  `json:"first_error,omitempty"`
}

type ack struct {
	Key string  `json:"key"`
	Rev int64   `json:"rev"`
	Ms  float64 `json:"ms"`
}

func usage(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "putload: "+format+"\n", a...)
	fmt.Fprintln(os.Stderr, "usage: putload --endpoints H:P,... (--count N | --duration D) "+
		"[--concurrency C] [--prefix K] [--value-size B] [--timeout T] [--json] [--acked FILE]")
	os.Exit(2)
}

func fatal(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "putload: "+format+"\n", a...)
	os.Exit(1)
}

// Nearest-rank percentile of sorted values (0 when there are none).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	if k < 0 {
		k = 0
	}
	return sorted[k]
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func main() {
	endpoints := flag.String("endpoints", "", "comma-separated host:port of the members")
	count := flag.Int64("count", 0, "puts to issue")
	duration := flag.Duration("duration", 0, "issue puts for this long (e.g. 5s), instead of --count")
	concurrency := flag.Int("concurrency", 1, "puts in flight at once")
	rate := flag.Float64("rate", 0, "puts per second, paced (put i starts at i/rate s; its latency counts from then); 0: as fast as --concurrency allows")
	prefix := flag.String("prefix", "k", "key prefix")
	valueSize := flag.Int("value-size", 16, "value size in bytes")
	timeout := flag.Duration("timeout", 2*time.Second, "timeout of each put")
	asJSON := flag.Bool("json", false, "write acked puts as JSON lines")
	ackedPath := flag.String("acked", "", "file for the acked puts (default: stdout)")
	flag.Usage = func() { usage("options:") }
	flag.Parse()

	if flag.NArg() > 0 {
		usage("unexpected argument %q", flag.Arg(0))
	}
	if *endpoints == "" {
		usage("--endpoints is required")
	}
	if (*count > 0) == (*duration > 0) {
		usage("give exactly one of --count N (N > 0) and --duration D (D > 0)")
	}
	if *concurrency < 1 || *valueSize < 0 || *timeout <= 0 || *rate < 0 {
		usage("--concurrency must be >= 1, --value-size >= 0, --timeout > 0, --rate >= 0")
	}

	var out io.Writer = os.Stdout
	if *ackedPath != "" {
		f, err := os.Create(*ackedPath)
		if err != nil {
			fatal("acked file: %v (give a writable path to --acked)", err)
		}
		defer f.Close()
		out = f
	}
	acked := bufio.NewWriter(out)

	// Client logs: errors only, on stderr (warnings about retries would flood it during faults).
	lcfg := logutil.DefaultZapLoggerConfig
	lcfg.Level = zap.NewAtomicLevelAt(zap.ErrorLevel)
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(*endpoints, ","),
		DialTimeout: 2 * time.Second,
		LogConfig:   &lcfg,
	})
	if err != nil {
		fatal("etcd client for %s: %v (check --endpoints)", *endpoints, err)
	}
	defer cli.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
	}()

	value := strings.Repeat("x", *valueSize)
	var (
		next       int64 // the next key index
		mu         sync.Mutex
		lat        []float64
		failed     int64
		firstError string
		wg         sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(*duration)
	for g := 0; g < *concurrency; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if *duration > 0 && !time.Now().Before(deadline) {
					return
				}
				i := atomic.AddInt64(&next, 1) - 1
				if *count > 0 && i >= *count {
					return
				}
				key := fmt.Sprintf("%s%d", *prefix, i)
				t0 := time.Now()
				if *rate > 0 {
					// Open loop: the put's time is its slot's, so a put that starts late
					// (the puts before it slow) counts the wait.
					t0 = start.Add(time.Duration(float64(i) * 1e9 / *rate))
					time.Sleep(time.Until(t0))
				}
				pctx, pcancel := context.WithTimeout(ctx, *timeout)
				resp, err := cli.Put(pctx, key, value)
				ms := float64(time.Since(t0).Microseconds()) / 1000
				pcancel()
				mu.Lock()
				if err != nil {
					failed++
					if firstError == "" {
						firstError = fmt.Sprintf("put %s: %v", key, err)
					}
				} else {
					lat = append(lat, ms)
					if *asJSON {
						line, _ := json.Marshal(ack{key, resp.Header.Revision, round3(ms)})
						acked.Write(append(line, '\n'))
					} else {
						fmt.Fprintf(acked, "%s %d %.3f\n", key, resp.Header.Revision, ms)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if err := acked.Flush(); err != nil {
		fatal("writing the acked puts: %v", err)
	}

	sort.Float64s(lat)
	s := summary{
		Puts:       int64(len(lat)) + failed,
		Acked:      int64(len(lat)),
		Failed:     failed,
		Seconds:    round3(secs),
		P50ms:      round3(percentile(lat, 50)),
		P99ms:      round3(percentile(lat, 99)),
		FirstError: firstError,
	}
	if secs > 0 {
		s.PerSecond = round3(float64(s.Acked) / secs)
	}
	line, _ := json.Marshal(s)
	fmt.Println(string(line))
}
