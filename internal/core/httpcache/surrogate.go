package httpcache

import (
	"net/http"
	"strings"
)

// SurrogateToken is the device token this cache announces upstream and
// answers to in Surrogate-Control targets (W3C Edge Architecture
// Specification 1.0: a surrogate is "strata" to the origins it fronts).
const SurrogateToken = "strata"

// SurrogateCapability is the Surrogate-Capability field a driver adds to
// the requests it sends upstream: this cache is a surrogate that
// understands Surrogate/1.0 (the Surrogate-Control directives max-age and
// no-store), named SurrogateToken.
const SurrogateCapability = SurrogateToken + `="Surrogate/1.0"`

// surrogateCC returns the Surrogate-Control directives of h aimed at this
// cache: the elements without a ";target" and those whose target is
// SurrogateToken (Edge Architecture §2.2); nil when there is none. An
// origin uses them to tell its surrogates, not browsers, how to cache:
// where they are, they take the place of Cache-Control's max-age,
// s-maxage, Expires and no-store for storing and freshness.
func surrogateCC(h http.Header) CacheControl {
	var mine []string
	for _, line := range h.Values("Surrogate-Control") {
		for elem := range strings.SplitSeq(line, ",") {
			d, target, targeted := strings.Cut(elem, ";")
			if targeted && !strings.EqualFold(strings.TrimSpace(target), SurrogateToken) {
				continue
			}
			mine = append(mine, d)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	return ParseCacheControl([]string{strings.Join(mine, ",")})
}
