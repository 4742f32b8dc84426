# Varnish in front of the cache-tests origin, as run.sh runs it: the
# built-in VCL does everything else (defaults). run.sh fills in
# @UPSTREAM_PORT@ (the origin's port).
vcl 4.1;

# The suite's origin, the only backend.
backend default {
    .host = "127.0.0.1";
    .port = "@UPSTREAM_PORT@";
}
