// summarize.mjs reads a cache-tests results file (the suite's CLI output:
// test id -> true, or [kind, message]) and prints the pass count the way
// cache-tests.fyi counts it (a result that is exactly true), then every
// other test: id, kind (required, optimal, check), and the suite's message.
//
//   node summarize.mjs RESULTS.json [LABEL]
import fs from 'fs'
import tests from 'http-cache-tests/tests/index.mjs'
import surrogate from 'http-cache-tests/tests/surrogate-control.mjs'

const [file, label] = process.argv.slice(2)
const results = JSON.parse(fs.readFileSync(file, 'utf8'))
// The CLI runs the suites of tests/index.mjs and surrogate-control, minus
// the browser-only tests, as cli.mjs and client/runner.mjs do.
const all = [...tests, surrogate].flatMap(suite => suite.tests.map(t => ({ suite: suite.id, ...t })))
  .filter(t => t.browser_only !== true)
const failed = all.filter(t => results[t.id] !== true)
const byKind = {}
for (const t of failed) {
  const kind = t.kind || 'required'
  byKind[kind] = (byKind[kind] || 0) + 1
}
console.log(`${label || file}: ${all.length - failed.length} / ${all.length} passed`)
console.log(`not passed by kind: ${JSON.stringify(byKind)}`)
for (const t of failed) {
  const r = results[t.id]
  const msg = r === undefined ? 'untested' : Array.isArray(r) ? `${r[0]}: ${r[1]}` : String(r)
  console.log(`- ${t.id} [${t.kind || 'required'}] ${msg.replace(/\s+/g, ' ')}`)
}
