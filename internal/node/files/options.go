package files

// DefaultOptions returns the options with every default filled in, for
// configurations that show or override them.
func DefaultOptions() Options {
	var o Options
	o.ensureDefaults()
	return o
}
