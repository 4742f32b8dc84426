package engine

import (
	"context"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
)

// Settle waits for the load of its key in progress and returns once its
// bytes are stored; with none in progress it returns at once. It takes no
// load slot: with every slot held, it still returns.
func TestSettle(t *testing.T) {
	e := testEngine(t, nil, nil, func(o *Options) { o.MaxLoads = 1 })
	ctx := context.Background()
	gate := make(chan struct{})
	loaded := make(chan error, 1)
	go func() {
		_, err := e.GetWith(ctx, "a", func(context.Context) ([]byte, error) {
			<-gate
			return []byte("bytes of a"), nil
		})
		loaded <- err
	}()
	for e.Stats().Origin.Loads == 0 { // the only slot is held
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { e.Settle(ctx, "a"); close(done) }()
	e.Settle(ctx, "b") // nothing in progress: at once, no slot needed
	select {
	case <-done:
		t.Fatal("Settle returned while the load was in progress")
	case <-time.After(20 * time.Millisecond):
	}
	close(gate)
	<-done
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	if f := e.Find("a"); f.Tier != tier.RAM {
		t.Fatalf("settled, the load is in %v", f.Tier)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	e.Settle(short, "a") // over: at once
}
