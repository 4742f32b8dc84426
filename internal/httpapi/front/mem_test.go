package front

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// BenchmarkFrontIdleConnMemory reports the memory (heap and stacks) an
// idle keep-alive connection holds on the Front and on net/http alone,
// after one answer: what an idle-connection flood costs per connection.
//
//	go test -run '^$' -bench FrontIdleConnMemory -benchtime 1x ./internal/httpapi/front
func BenchmarkFrontIdleConnMemory(b *testing.B) {
	const conns = 500
	front, plain, _, _ := serveBoth(b, oddRoutes(closed()), Options{ReadHeader: time.Minute, Idle: time.Minute, Write: time.Minute})
	inUse := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	for _, s := range []struct{ name, addr string }{{"front", front}, {"net/http", plain}} {
		b.Run(s.name, func(b *testing.B) {
			for range b.N {
				before := inUse()
				var cs []net.Conn
				for range conns {
					c, err := net.Dial("tcp", s.addr)
					if err != nil {
						b.Fatal(err)
					}
					cs = append(cs, c)
					io.WriteString(c, req("/v/ok"))
					resp, err := http.ReadResponse(bufio.NewReader(c), nil)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
				}
				after := inUse()
				b.ReportMetric(float64(after-before)/conns, "B/conn")
				for _, c := range cs {
					c.Close()
				}
			}
		})
	}
}
