// Package httpcache holds the HTTP caching decisions of a shared cache (RFC
// 9111, with the stale-while-revalidate and stale-if-error extensions of RFC
// 5861) as pure functions of header fields and the current time: whether a
// response may be stored, how long it stays fresh, whether a stored response
// can answer a request, how to revalidate it and how a 304 refreshes it.
//
// It starts no goroutines, never sleeps and does no I/O: the edge driver
// passes in the headers it received and the clock readings it took, performs
// the fetches the decisions ask for, and keeps the bodies. The cache it
// describes is always a shared cache (RFC 9111 §1: "a cache that stores
// responses for reuse by more than one user"), so private responses are never
// stored and s-maxage and proxy-revalidate apply.
package httpcache
