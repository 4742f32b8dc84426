//go:build !race

package front

// raceEnabled: built with the race detector (rawread.go).
const raceEnabled = false
