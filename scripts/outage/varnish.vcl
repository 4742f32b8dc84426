# Varnish as an edge that keeps answering through an origin outage, for
# scripts/bench-outage.sh: the grace setup of Varnish's users guide
# ("Grace mode and keep", the VCL under "Misbehaving servers"): objects
# kept a long grace past their TTL, used in full only while a health probe
# says the backend is sick, capped at 10 s while it is healthy.
# bench-outage.sh fills in @UPSTREAM_PORT@.
vcl 4.1;

import std;

# The origin, with the users guide's health probe ("Backend servers",
# "Health checks"): one request every 5 s, each given 1 s; healthy while
# at least 3 of the last 5 succeed. .initial = 3: healthy at start (the
# default, threshold - 1, starts sick until the first probe answers).
backend default {
    .host = "127.0.0.1";
    .port = "@UPSTREAM_PORT@";
    .connect_timeout = 5s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
    .probe = {
        .url = "/videos";
        .interval = 5s;
        .timeout = 1s;
        .window = 5;
        .threshold = 3;
        .initial = 3;
    }
}

sub vcl_recv {
    # The origin's / under /edge/, as for the other caches.
    if (req.url ~ "^/edge/") {
        set req.url = regsub(req.url, "^/edge/", "/");
    }
    # While the origin is healthy, a stale object is served (and refreshed
    # in the background) only within 10 s past its TTL; when it is sick,
    # within the object's whole grace.
    if (std.healthy(req.backend_hint)) {
        set req.grace = 10s;
    }
}

sub vcl_backend_response {
    # Keep every object a day past its TTL, to answer from while the origin
    # is down (the users guide's example keeps 6 h; a day is Strata's
    # default keep_on_error).
    set beresp.grace = 24h;
}

sub vcl_deliver {
    # HIT, MISS or a grace hit (stale), as X-Cache for a look with curl.
    if (obj.uncacheable) {
        set resp.http.X-Cache = "PASS";
    } elsif (obj.hits > 0 && obj.ttl < 0s) {
        set resp.http.X-Cache = "STALE";
    } elsif (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}
