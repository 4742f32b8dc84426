# Varnish as a video edge in front of the peers origin, as
# scripts/peers/run.sh runs it: two stores, "ram" (-s malloc) and "flash"
# (-s file on the flash file); small objects (manifests, the catalog, short
# low-bitrate segments) are kept in RAM and larger ones on the file, the
# split Varnish's documentation shows for choosing a storage backend in
# vcl_backend_response. Everything else is the built-in VCL. run.sh fills
# in @UPSTREAM_PORT@.
vcl 4.1;

import std;

# The origin, the only backend; timeouts for a WAN origin.
backend default {
    .host = "127.0.0.1";
    .port = "@UPSTREAM_PORT@";
    .connect_timeout = 5s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
}

sub vcl_recv {
    # The edge's whole library is under /edge/, mapped to the origin's /.
    if (req.url ~ "^/edge/") {
        set req.url = regsub(req.url, "^/edge/", "/");
    }
}

sub vcl_backend_response {
    # Stream bodies to the client while they arrive (Varnish's default, said
    # explicitly for video).
    set beresp.do_stream = true;
    # Objects of 256 KiB and more on the file store, the rest in RAM.
    if (std.integer(beresp.http.Content-Length, 0) >= 262144) {
        set beresp.storage = storage.flash;
    } else {
        set beresp.storage = storage.ram;
    }
}
