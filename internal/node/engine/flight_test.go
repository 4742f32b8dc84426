package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/strata-media/strata/internal/core/tier"
)

// blockedLoad is a Loader that waits for release or its context's end,
// and says which on ended (nil: released).
type blockedLoad struct {
	started chan struct{}
	release chan struct{}
	ended   chan error
	hold    bool // holds the load (Hold) before it waits, until release
}

func newBlockedLoad() *blockedLoad {
	return &blockedLoad{started: make(chan struct{}, 8), release: make(chan struct{}), ended: make(chan error, 8)}
}

func (b *blockedLoad) load(ctx context.Context) ([]byte, error) {
	if b.hold {
		release, ok := Hold(ctx)
		if !ok {
			return nil, errors.New("abandoned before the hold")
		}
		defer release()
	}
	b.started <- struct{}{}
	select {
	case <-b.release:
		b.ended <- nil
		return []byte("the object"), nil
	case <-ctx.Done():
		b.ended <- ctx.Err()
		return nil, ctx.Err()
	}
}

// A load shared by two callers goes on when one leaves, and the other
// gets its bytes; it is canceled once both have left, and the next
// caller starts a load of its own.
func TestLoadAbandonedWhenLastWaiterLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := testEngine(t, nil, library(t), nil)
		b := newBlockedLoad()
		ctx1, cancel1 := context.WithCancel(t.Context())
		ctx2, cancel2 := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		var err1, err2 error
		wg.Go(func() { _, err1 = e.GetWith(ctx1, "f/a", b.load) })
		<-b.started
		wg.Go(func() { _, err2 = e.GetWith(ctx2, "f/a", b.load) })
		synctest.Wait()
		cancel1()
		synctest.Wait()
		select {
		case err := <-b.ended:
			t.Fatalf("one of two callers left: the load ended (%v)", err)
		default:
		}
		cancel2()
		wg.Wait()
		if err := <-b.ended; !errors.Is(err, context.Canceled) {
			t.Fatalf("both callers left: the load ended with %v, want its context canceled", err)
		}
		if !errors.Is(err1, context.Canceled) || !errors.Is(err2, context.Canceled) {
			t.Errorf("the callers got %v, %v", err1, err2)
		}
		if st := e.Stats().Origin; st.Abandoned != 1 || st.Errors != 0 {
			t.Errorf("origin stats %+v: want 1 abandoned, no error", st)
		}
		// The next caller does not join the abandoned load.
		close(b.release)
		res, err := e.GetWith(t.Context(), "f/a", b.load)
		if err != nil || string(res.Data) != "the object" {
			t.Fatalf("after the abandoned load: %q, %v", res.Data, err)
		}
	})
}

// A load shared by two callers, one of which leaves, completes for the
// other and is stored.
func TestLoadGoesOnForRemainingWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := testEngine(t, nil, library(t), nil)
		b := newBlockedLoad()
		ctx1, cancel1 := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		var err1 error
		wg.Go(func() { _, err1 = e.GetWith(ctx1, "f/a", b.load) })
		<-b.started
		var res2 Result
		var err2 error
		wg.Go(func() { res2, err2 = e.GetWith(t.Context(), "f/a", b.load) })
		synctest.Wait()
		cancel1()
		synctest.Wait()
		close(b.release)
		wg.Wait()
		if !errors.Is(err1, context.Canceled) || err2 != nil || string(res2.Data) != "the object" {
			t.Fatalf("the caller that left got %v; the one that stayed %q, %v", err1, res2.Data, err2)
		}
		if f := e.Find("f/a"); f.Tier != tier.RAM {
			t.Errorf("the load's bytes are in %v, want RAM", f.Tier)
		}
	})
}

// A load held by its loader (a client reading its bytes as they arrive)
// goes on after its only caller left, until the hold is released.
func TestLoadHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := testEngine(t, nil, library(t), nil)
		b := newBlockedLoad()
		b.hold = true
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { _, err := e.GetWith(ctx, "f/a", b.load); done <- err }()
		<-b.started
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the caller got %v", err)
		}
		synctest.Wait()
		select {
		case err := <-b.ended:
			t.Fatalf("held, the load ended (%v)", err)
		default:
		}
		close(b.release)
		if err := <-b.ended; err != nil {
			t.Fatalf("held, the load ended with %v", err)
		}
		synctest.Wait()
		if f := e.Find("f/a"); f.Tier != tier.RAM {
			t.Errorf("the held load's bytes are in %v, want RAM", f.Tier)
		}
	})
}
