package main

import (
	"flag"

	"github.com/strata-media/strata/internal/node/app"
)

// edgeRuleFlags registers the flags of the [edge] table's cache-rule
// defaults; the [[edge.rule]] tables are set in the config file only.
func edgeRuleFlags(fs *flag.FlagSet, e *app.EdgeConfig) {
	fs.DurationVar(&e.DefaultTTL.Duration, "edge-default-ttl", e.DefaultTTL.Duration, "edge mode: lifetime of an upstream answer without max-age, s-maxage or Expires (0: 10% of its age since Last-Modified, RFC 9111)")
	fs.DurationVar(&e.HeuristicMin.Duration, "edge-heuristic-min", e.HeuristicMin.Duration, "edge mode: least lifetime of an answer kept fresh by the Last-Modified heuristic")
	fs.DurationVar(&e.HeuristicMax.Duration, "edge-heuristic-max", e.HeuristicMax.Duration, "edge mode: most lifetime of an answer kept fresh by the Last-Modified heuristic (0: no heuristic)")
	fs.DurationVar(&e.TTL.Duration, "edge-ttl", e.TTL.Duration, "edge mode: lifetime of every stored answer, replacing the upstream's max-age (0: the upstream's)")
	fs.DurationVar(&e.MaxTTL.Duration, "edge-max-ttl", e.MaxTTL.Duration, "edge mode: cap on the lifetime of every stored answer, the upstream's max-age included (0: none)")
	fs.BoolVar(&e.Immutable, "edge-immutable", e.Immutable, "edge mode: treat stored answers as Cache-Control: immutable (no revalidation on a client's reload while fresh)")
	fs.DurationVar(&e.Grace.Duration, "edge-grace", e.Grace.Duration, "edge mode: serve an expired answer while revalidating it in the background, this long past its freshness, when the upstream sent no stale-while-revalidate (0: none)")
	fs.DurationVar(&e.KeepOnError.Duration, "edge-keep-on-error", e.KeepOnError.Duration, "edge mode: serve an expired answer, marked STALE, this long past its freshness when the upstream fails, times out or answers 5xx (0: never); the upstream's stale-if-error replaces it")
	fs.StringVar(&e.Query, "edge-query", e.Query, "edge mode: query parameters in the cache key: all, none, or list (--edge-query-params)")
	fs.Var((*commaList)(&e.QueryParams), "edge-query-params", "edge mode: with --edge-query list, the query parameters the cache key keeps, comma-separated")
	fs.Var(&e.MaxObjectSize, "edge-max-object-size", "edge mode: largest upstream answer stored")
	fs.Var(&e.SliceSize, "edge-slice-size", "edge mode: size of the aligned slices large answers are fetched and stored in (needs a restart)")
	fs.IntVar(&e.MaxRelays, "edge-max-relays", e.MaxRelays, "edge mode: most requests relayed upstream at once because the overloaded flash device shed the read of their copy; past it the copy is read past the limit, else loaded as a miss (0: the edge's upstream loads at once, 64; negative: no bound; needs a restart)")
	fs.Var(&e.FillMemory, "edge-fill-memory", "edge mode: most bytes of upstream answers held in memory while they are read, a part of the memory budget; past it a miss waits for room (needs a restart)")
}
