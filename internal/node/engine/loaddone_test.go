package engine

import (
	"context"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
)

// LoadDone, from a loader's context, is closed once that load is over and
// its bytes are stored (a lookup then finds them), not before; it needs no
// load slot of its own. A context that is not a loader's has none.
func TestLoadDone(t *testing.T) {
	e := testEngine(t, nil, nil, func(o *Options) { o.MaxLoads = 1 })
	if LoadDone(context.Background()) != nil {
		t.Fatal("a context that is not a loader's has a load")
	}
	ctx := context.Background()
	gate := make(chan struct{})
	dones := make(chan (<-chan struct{}), 1)
	loaded := make(chan error, 1)
	go func() {
		_, err := e.GetWith(ctx, "a", func(lctx context.Context) ([]byte, error) {
			dones <- LoadDone(lctx)
			<-gate
			return []byte("bytes of a"), nil
		})
		loaded <- err
	}()
	done := <-dones // the only load slot is held
	select {
	case <-done:
		t.Fatal("LoadDone closed while the load was in progress")
	case <-time.After(20 * time.Millisecond):
	}
	close(gate)
	<-done
	if f := e.Find("a"); f.Tier != tier.RAM {
		t.Fatalf("the load is over, its bytes in %v", f.Tier)
	}
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
}
