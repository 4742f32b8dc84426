package des

import (
	"sync"
	"sync/atomic"
)

// RunJobs runs jobs, at most parallel at a time (at least one). Each job
// writes its own results, so the outcome does not depend on the order they
// finish in; after a failure the jobs not yet started are skipped, and the
// error returned is the first in job order, the same on every run.
func RunJobs(jobs []func() error, parallel int) error {
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	var failed atomic.Bool
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		sem <- struct{}{}
		if failed.Load() {
			<-sem
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if errs[i] = j(); errs[i] != nil {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
