package des

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
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
	// order of completion; jobs not started after a failure are skipped.
	// Job 2 fails only after job 3 has started and failed.
	var ran atomic.Int32
	first := errors.New("job 2")
	threeFailing := make(chan struct{})
	jobs = jobs[:0]
	for i := range 50 {
		jobs = append(jobs, func() error {
			ran.Add(1)
			switch i {
			case 2:
				<-threeFailing
				time.Sleep(time.Millisecond)
				return first
			case 3:
				close(threeFailing)
				return fmt.Errorf("job 3")
			}
			return nil
		})
	}
	if err := RunJobs(jobs, 3); err != first {
		t.Fatalf("got %v, want %v", err, first)
	}
	if ran.Load() == 50 {
		t.Fatal("every job ran after a failure")
	}
	// parallel below one runs one at a time rather than never.
	for _, p := range []int{0, -1} {
		n := 0
		if err := RunJobs([]func() error{func() error { n++; return nil }, func() error { n++; return nil }}, p); err != nil || n != 2 {
			t.Fatalf("parallel %d: %d jobs ran, err %v", p, n, err)
		}
	}
	if err := RunJobs(nil, 0); err != nil {
		t.Fatal(err)
	}
}
