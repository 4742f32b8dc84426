// Package arch holds no code: its test keeps the tree's layers one-way
// (core imports nothing of ours; node and sim import the core, never each
// other; the product never imports the lab, internal/lab and
// cmd/strata-lab), so that the folder names stay a true map of the
// architecture.
package arch
