// origin.mjs starts the cache-tests origin server (server/server.mjs of
// the pinned http-cache-tests) bound to 127.0.0.1 only: the suite's
// server listens on every interface, so listen is wrapped to add the host.
// The port comes from npm_config_port, as `npm run server --port=N` sets it.
import http from 'http'

const listen = http.Server.prototype.listen
http.Server.prototype.listen = function (port, ...rest) {
  return listen.call(this, port, '127.0.0.1', ...rest)
}
await import('http-cache-tests/server/server.mjs')
