// Package front is the Front: Strata's own HTTP/1.1 server for the plain
// reads of media segments, in front of net/http. It serves the requests
// its FastHandlers take straight off the connection and hands every other
// request, with its connection, to net/http (Front, FastHandler).
//
// It imports nothing of Strata's: the API (internal/httpapi) builds it
// over its fast routes, CORS policy, route metrics and access log through
// the interfaces of Options, and the node (internal/node/app) serves it.
package front
