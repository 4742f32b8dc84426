package des

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
	// order of completion: job 2 fails only once job 3 is failing, so
	// either may finish first.
	first := errors.New("job 2")
	threeFailing := make(chan struct{})
	jobs = jobs[:0]
	for i := range 10 {
		jobs = append(jobs, func() error {
			switch i {
			case 2:
				<-threeFailing
				return first
			case 3:
				defer close(threeFailing)
				return fmt.Errorf("job 3")
			}
			return nil
		})
	}
	if err := RunJobs(jobs, 3); err != first {
		t.Fatalf("got %v, want %v", err, first)
	}
	// Jobs not started when one fails are skipped: one at a time, a
	// failure of job 3 is recorded before job 4 could start.
	var ran atomic.Int32
	jobs = jobs[:0]
	for i := range 50 {
		jobs = append(jobs, func() error {
			ran.Add(1)
			if i == 3 {
				return errors.New("job 3")
			}
			return nil
		})
	}
	if err := RunJobs(jobs, 1); err == nil || ran.Load() != 4 {
		t.Fatalf("err %v, %d jobs ran; want job 3's error and 4 jobs", err, ran.Load())
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
