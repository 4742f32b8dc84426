// Package vod is the sans-I/O policy core of whole-file video on demand
// (the VoD paper, flash-ssd-for-vod-*): file-level LFU on flash with
// decaying request counts and a flash write budget, stream admission
// control by reserved bandwidth (the paper's Algorithms 1 and 2), and the
// bookkeeping of interval caching in RAM (Dan and Sitaram). Nothing here
// starts a goroutine, sleeps or does I/O: the caller passes the current
// time in and carries out the decisions, so the live server and the
// simulator run the same policies.
//
// Units: sizes are bytes, rates bytes per second, times time.Duration since
// any fixed origin the caller chooses.
package vod

import "errors"

// Errors returned by the package; callers match them with errors.Is.
var (
	// ErrInvalid reports options or arguments a policy cannot use.
	ErrInvalid = errors.New("vod: invalid argument")
	// ErrState reports a call that does not fit a file's or stream's state
	// (installing a file that is not being copied, a stream seen twice).
	ErrState = errors.New("vod: wrong state")
)

// Binary units, as the paper uses them (245 KB/s x 3600 s = 862 MB; 155
// MB/s / 245 KB/s = 647 streams).
const (
	KB int64 = 1 << 10
	MB int64 = 1 << 20
	GB int64 = 1 << 30
)
