package sim

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestRunJobs(t *testing.T) {
	results := make([]int, 10)
	var jobs []func() error
	for i := range results {
		jobs = append(jobs, func() error { results[i] = i * i; return nil })
	}
	if err := RunJobs(jobs, 3); err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r != i*i {
			t.Fatalf("job %d wrote %d", i, r)
		}
	}
	// The error is the first failing job's in job order, whatever the
	// order of completion, and jobs after a failure may be skipped.
	var ran atomic.Int32
	first := errors.New("job 2")
	jobs = jobs[:0]
	for i := range 50 {
		jobs = append(jobs, func() error {
			ran.Add(1)
			switch i {
			case 2:
				return first
			case 3:
				return fmt.Errorf("job 3")
			}
			return nil
		})
	}
	for range 20 {
		ran.Store(0)
		if err := RunJobs(jobs, 2); err != first {
			t.Fatalf("got %v, want %v", err, first)
		}
		if ran.Load() == 50 {
			t.Fatal("every job ran after a failure")
		}
	}
	if err := RunJobs(nil, 0); err != nil {
		t.Fatal(err)
	}
}
