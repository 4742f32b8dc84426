// Package front is the Front: Strata's own HTTP/1.1 server for the plain
// reads of media segments, in front of net/http. It serves the requests
// its FastHandlers take straight off the connection and hands every other
// request, with its connection, to net/http (Front, FastHandler).
//
// It imports nothing of Strata's: the API (internal/httpapi) builds it
// over its fast routes, CORS policy, route metrics and access log through
// the interfaces of Options, and the node (internal/node/app) serves it.
//
// # The FastHandler contract
//
// A FastHandler either hands the request back, having written nothing
// (not a header field's worth: the ResponseWriter's Header may be read
// and written, nothing more), or answers it whole. An answer:
//
//   - has a status of 200 to 599 (WriteHeader, or 200 by the first
//     Write); the handlers of the tree send 200 only. An informational
//     status (1xx) is ignored, as net/http ignores it after the header.
//   - sets Content-Type, one value (an empty value list: no type and no
//     sniffing, as on net/http), and Content-Length, one decimal value,
//     then writes exactly that many bytes of body (none on a HEAD, 204 or
//     304), in as few writes as it can: the first goes out with the header
//     in one writev(2).
//   - sets only field names that are tokens, and no Transfer-Encoding or
//     Trailer field: the Front frames every answer by its Content-Length.
//     Connection is the Front's, not the handler's.
//
// The Front guarantees, for such an answer: it reaches the wire as
// net/http would have written it (the fields sorted, Date last unless
// the handler set one, values trimmed and newlines replaced as net/http
// does); the connection is kept for the next request unless the client
// asked to close it or the Front is shutting down (then the answer says
// Connection: close); the request's context is cancelled when the client
// hangs up (closes or half-closes) while the handler runs, as net/http's
// background read cancels it (the Front reads only once a handler has run
// for watchAfter: a RAM hit pays no read; a Prompt handler, which never
// waits for a peer, is not watched at all), and when the Front closes; a
// panic ends the connection, not the process (http.ErrAbortHandler is
// not logged); a connection closes lingering, whoever closes it (the
// Front, or net/http once handed over): half-closed, the client's bytes
// read and discarded for a bounded time and size, then closed, so that
// bytes of the client's left unread (a malformed request net/http
// refuses, what was pipelined behind it) never turn the close into a
// reset that cuts the answers before it (linger.go; net/http alone is
// to be served over Lingering to close the same way).
//
// What breaks the contract, the Front asserts:
//
//   - refused (the connection is closed with nothing of the answer sent,
//     as after a panic, and the breach logged): a status over 599, a field
//     name that is not a token, a Transfer-Encoding or Trailer field.
//     Writing them would put bytes on the wire that net/http never sends
//     and a client could read as another answer.
//   - made safe as net/http makes it (these are checked on the wire
//     against net/http alone, and kept): a body past the Content-Length
//     is not written and the connection closes short of it; a body on a
//     HEAD, 204 or 304 is dropped; a body shorter than the Content-Length
//     closes the connection; a Content-Length that is not a length is
//     dropped, and the body framed by the connection's end; of two
//     lengths the first counts; a body without a type is sniffed; a
//     Connection field of the handler's that says close (net/http's
//     reading) closes the connection after the answer.
//
// # On a Go upgrade
//
// The Front mirrors net/http where its answers must be the same bytes.
// After a Go upgrade, run this package's tests and its fuzz targets
// (make fuzz), and the node's wire comparisons (internal/node/app,
// TestFrontAnswersAsNetHTTP, TestEdgeFrontAnswersAsNetHTTP), and re-read
// in net/http's server.go and transfer.go: the order and form of the
// response fields (Header.writeSubset's sorting, Date, the "status code
// N" text of an unknown status), when it adds Content-Length or
// chunks or closes (cw.writeHeader, the 2 KiB buffered first write, the
// content sniffing), its reading of Connection (hasToken, wantsClose),
// how it treats a handler's bad Content-Length and writes past it
// (ErrContentLength), the request parsing the Front's parser must never
// accept more than (readRequest, textproto's field and value checks,
// fixPragmaCacheControl, the Host checks), ReadHeaderTimeout and
// IdleTimeout's deadlines, how it closes a connection after a bad request
// (closeWriteAndWait, which lingering makes safe whatever it does) and its background read that cancels a request's
// context when the client hangs up (the Front's watch).
package front
