package origin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/minio/minio-go/v7"
)

// retrier runs a request as S3Options say: each attempt bounded by
// RequestTimeout, failures classified into the package's errors, and
// retried after an exponential backoff when they may pass (server errors,
// timeouts, connection errors), at most Retries times. minio-go would
// retry too, but on a fixed schedule of up to ten attempts and on errors
// that do not pass (an expired token, a throttling 429), with no
// per-attempt timeout; its retries are turned off (MaxRetries 1) for
// reads, so that one policy, this one, bounds how long a miss can take.
type retrier struct {
	opts S3Options
	log  *slog.Logger
}

// do runs attempt until it succeeds, fails for good, or the retries run
// out. what names the request in errors ("get v/r/1.m4s"). If ctx ends,
// the error wraps ctx's error, not the package's: the caller gave up.
func (r retrier) do(ctx context.Context, what string, attempt func(context.Context) error) error {
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
		err := attempt(actx)
		cancel()
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("origin: %s: %w", what, cerr)
		}
		err, again := classify(what, err)
		if !again || n > r.opts.Retries {
			return err
		}
		if r.opts.retryHook != nil {
			r.opts.retryHook(n, err)
		}
		wait := r.backoff(n)
		r.log.Debug("origin: S3 request failed, retrying", "request", what, "attempt", n, "wait", wait, "err", err)
		if err := sleepCtx(ctx, wait); err != nil {
			return fmt.Errorf("origin: %s: %w", what, err)
		}
	}
}

// backoff is the wait after failed attempt n (1 for the first): RetryBase
// doubled n-1 times, capped at RetryMax, less a random jitter of up to
// half so that clients that failed together do not retry together.
func (r retrier) backoff(n int) time.Duration {
	d := r.opts.RetryMax
	if n-1 < 30 {
		d = min(r.opts.RetryBase<<(n-1), r.opts.RetryMax)
	}
	return d - time.Duration(rand.Int64N(int64(d)/2+1))
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// classify wraps err of request what in the package's error for its
// kind, and reports whether another attempt may succeed. Errors already
// wrapping one of the package's errors keep it and are not retried.
func classify(what string, err error) (error, bool) {
	for _, known := range []error{ErrNotFound, ErrTooLarge, ErrInvalidRange, ErrUpstream, ErrUnavailable, ErrTimeout, ErrChanged} {
		if errors.Is(err, known) {
			return fmt.Errorf("origin: %s: %w", what, err), false
		}
	}
	kind, again := kindOf(err)
	return fmt.Errorf("%w: %s: %w", kind, what, err), again
}

// kindOf returns the package's error for err, an error of minio-go or of
// the transport, and whether it may pass.
func kindOf(err error) (error, bool) {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.StatusCode != 0 {
		return statusKind(resp.StatusCode, resp.Code)
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ErrTimeout, true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ErrUpstream, true // the connection broke mid-body
	}
	var ue *url.Error
	var oe *net.OpError
	if errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &ne) {
		return ErrUnavailable, true // refused, reset, no route, no such host
	}
	return ErrUpstream, false
}

// statusKind classifies an S3 error answer by its HTTP status and code.
func statusKind(status int, code string) (error, bool) {
	switch {
	case status == http.StatusNotFound && code == "NoSuchBucket":
		return ErrUpstream, false // a configuration error, not a missing object
	case status == http.StatusNotFound:
		return ErrNotFound, false
	case status == http.StatusRequestedRangeNotSatisfiable:
		return ErrInvalidRange, false
	case status == http.StatusTooManyRequests:
		return ErrUnavailable, false
	case status == http.StatusServiceUnavailable:
		return ErrUnavailable, true // Slow Down, or down
	case status == http.StatusGatewayTimeout:
		return ErrTimeout, true
	case status >= 500:
		return ErrUpstream, true
	}
	return ErrUpstream, false // 403 and the like: the store refuses us
}
