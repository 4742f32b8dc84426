package app

import (
	"errors"
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/node/edge"
)

// TestFlashObjective: auto is bytes in edge mode and requests otherwise;
// an explicit objective wins; an unknown one is a config error; and the
// engine's core gets what the config says.
func TestFlashObjective(t *testing.T) {
	edge := []UpstreamConfig{{Prefix: "/", URL: "http://127.0.0.1:1/"}}
	for _, tc := range []struct {
		objective string
		upstreams []UpstreamConfig
		want      tier.Objective
	}{
		{ObjectiveAuto, nil, tier.ObjectiveRequests},
		{ObjectiveAuto, edge, tier.ObjectiveBytes},
		{"", edge, tier.ObjectiveBytes},
		{"requests", edge, tier.ObjectiveRequests},
		{"bytes", nil, tier.ObjectiveBytes},
		{"balanced", edge, tier.ObjectiveBalanced},
	} {
		cfg := DefaultConfig()
		cfg.Objective, cfg.Upstreams = tc.objective, tc.upstreams
		got, err := cfg.FlashObjective()
		if err != nil || got != tc.want {
			t.Errorf("objective %q, %d upstreams: got %v, %v; want %v", tc.objective, len(tc.upstreams), got, err, tc.want)
		}
		if o := engineOptions(&cfg, nil, nil, nil).Tier.Objective; o != tc.want {
			t.Errorf("objective %q, %d upstreams: the engine's core got %v, want %v", tc.objective, len(tc.upstreams), o, tc.want)
		}
	}
	cfg := DefaultConfig()
	cfg.Objective = "hits"
	if err := cfg.Resolve(); !errors.Is(err, ErrConfig) {
		t.Errorf("objective %q: Resolve = %v, want ErrConfig", cfg.Objective, err)
	}
	if DefaultConfig().Objective != ObjectiveAuto {
		t.Errorf("default objective %q, want %q", DefaultConfig().Objective, ObjectiveAuto)
	}
}

// TestEdgeKeysGrouped: the engine's core groups an edge object's key by
// its path's directory (edge.TierGroup), not by the object itself.
func TestEdgeKeysGrouped(t *testing.T) {
	cfg := DefaultConfig()
	g := engineOptions(&cfg, nil, nil, nil).Tier.Group
	if g == nil {
		t.Fatal("no Group for the engine's core")
	}
	a := edge.TierKey("/edge/", "http://127.0.0.1:1/", "videos/t1/700k/1.m4s")
	b := edge.TierKey("/edge/", "http://127.0.0.1:1/", "videos/t1/700k/2.m4s")
	if g(a) != g(b) || g(a) == a {
		t.Errorf("groups %q and %q: want one group for a rendition's segments", g(a), g(b))
	}
}

// TestPolicySessions: the session table is on by default and
// policy_sessions = false turns it off in the engine's core.
func TestPolicySessions(t *testing.T) {
	cfg := DefaultConfig()
	if !cfg.PolicySessions || engineOptions(&cfg, nil, nil, nil).Tier.Sessions != 0 {
		t.Fatalf("default: policy_sessions %v, core Sessions %d; want on, the core's default",
			cfg.PolicySessions, engineOptions(&cfg, nil, nil, nil).Tier.Sessions)
	}
	cfg.PolicySessions = false
	if s := engineOptions(&cfg, nil, nil, nil).Tier.Sessions; s >= 0 {
		t.Fatalf("policy_sessions false: core Sessions %d, want negative (off)", s)
	}
}
