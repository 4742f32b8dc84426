// Package httpapi is the edge of Strata's HTTP API: the one way a subsystem mounts its routes, /stats section and metrics, one error format and one content-type table.
package httpapi
