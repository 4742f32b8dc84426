package httpapi

import (
	"runtime"
	"runtime/debug"
)

// buildVersion, if set at link time (-ldflags "-X
// github.com/strata-media/strata/internal/httpapi.buildVersion=v1.2.3",
// as packaging/Dockerfile does with its VERSION), is the version every
// printout names instead of the one Go's build information has.
var buildVersion string

// Build names the running binary's build: what strata version prints,
// the start banner's first line and the labels of strata_build_info.
type Build struct {
	// Version is the main module's version: the one set at link time,
	// else the one go build stamps from the VCS (a tag, or a
	// pseudo-version of the commit, "+dirty" when the tree had
	// uncommitted changes), else "(devel)".
	Version string `json:"version"`
	// Revision is the VCS revision built, "unknown" without one;
	// Modified says the tree had uncommitted changes; Time is the
	// commit's time (RFC 3339), "" if unknown.
	Revision string `json:"revision"`
	Modified bool   `json:"modified,omitempty"`
	Time     string `json:"time,omitempty"`
	// GoVersion is the Go toolchain that built it.
	GoVersion string `json:"go"`
}

// ReadBuild returns the running binary's Build, from Go's build
// information (runtime/debug.ReadBuildInfo).
func ReadBuild() Build {
	b := Build{Version: "(devel)", Revision: "unknown", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "vcs.time":
				b.Time = s.Value
			}
		}
	}
	if buildVersion != "" {
		b.Version = buildVersion
	}
	return b
}

// String is the build on one line: "v1.2.0 (revision 0123456789ab,
// 2026-11-27T11:53:15Z, go1.26.8)", the revision shortened to 12
// digits and marked "modified" for a tree with uncommitted changes.
func (b Build) String() string {
	s := b.Version + " ("
	if b.Revision != "unknown" {
		s += "revision " + short(b.Revision)
		if b.Modified {
			s += " modified"
		}
		if b.Time != "" {
			s += ", " + b.Time
		}
		s += ", "
	}
	return s + b.GoVersion + ")"
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
