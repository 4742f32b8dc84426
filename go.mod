module github.com/strata-media/strata

go 1.26.0

require (
	github.com/cockroachdb/datadriven v1.0.3
	golang.org/x/sys v0.49.0
)

require github.com/pmezard/go-difflib v1.0.0 // indirect
