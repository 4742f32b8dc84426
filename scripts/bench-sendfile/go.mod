// A module of its own, outside ./... of strata: a measurement, not part of the server.
module strata-bench-sendfile

go 1.26
