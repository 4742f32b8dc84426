package framesim

import (
	"fmt"
	"math"
	"strings"
)

// A claim is one statement of FG §IV's text set against the simulation.
type claim struct {
	ID     string `json:"id"`
	Figure string `json:"figure"`
	Paper  string `json:"paper"`
	Sim    string `json:"sim"`
	// Verdict is "yes", "close" (within a few points) or "no".
	Verdict string `json:"verdict"`
}

// verdict grades a boolean claim.
func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// nearVerdict grades value v against target t: within 3 points yes,
// within 6 close.
func nearVerdict(v, t float64) string {
	switch d := math.Abs(v - t); {
	case d <= 0.03:
		return "yes"
	case d <= 0.06:
		return "close"
	}
	return "no"
}

// meanGain is the mean gain over the user counts.
func meanGain(ps []pair, device, mix string) float64 {
	var s float64
	for _, u := range userCounts {
		s += find(ps, device, mix, u).Gain
	}
	return s / float64(len(userCounts))
}

// claims checks FG §IV's statements.
func (r *Report) claims() []claim {
	return []claim{r.ssd2Mix2(), r.hddMix(mix1, 0.13), r.hddMix(mix2, 0.11), r.mix2AboveMix1(),
		r.ssd2AboveSSD1(), r.ssdAboveHDD(), r.levelOne(), r.writesSimilar(), r.highLevels(), r.bestS()}
}

func (r *Report) ssd2Mix2() claim {
	lo, hi := gainRange(r.Fig14, ssD2.Name, mix2.Name)
	v := "no"
	if lo > 0.34 {
		v = "yes"
	} else if hi > 0.29 {
		v = "close"
	}
	return claim{ID: "ssd2-mix2", Figure: "Fig. 14", Paper: "SSD2, mix 2: gain over 34%", Sim: gainText(lo, hi), Verdict: v}
}

func (r *Report) hddMix(mix Mix, want float64) claim {
	lo, hi := gainRange(r.Fig14, hdd.Name, mix.Name)
	return claim{ID: "hdd-" + strings.ReplaceAll(mix.Name, " ", ""), Figure: "Fig. 14(a)",
		Paper: fmt.Sprintf("HDD, %s: gain %.0f%%", mix.Name, 100*want), Sim: gainText(lo, hi),
		Verdict: nearVerdict(meanGain(r.Fig14, hdd.Name, mix.Name), want)}
}

func (r *Report) mix2AboveMix1() claim {
	ok := true
	var parts []string
	for _, d := range []Device{ssD1, ssD2} {
		for _, u := range userCounts {
			g1, g2 := find(r.Fig14, d.Name, mix1.Name, u).Gain, find(r.Fig14, d.Name, mix2.Name, u).Gain
			ok = ok && g2 > g1
		}
		lo1, hi1 := gainRange(r.Fig14, d.Name, mix1.Name)
		lo2, hi2 := gainRange(r.Fig14, d.Name, mix2.Name)
		parts = append(parts, fmt.Sprintf("%s: %s vs %s", d.Name, gainText(lo1, hi1), gainText(lo2, hi2)))
	}
	return claim{ID: "mix2-above-mix1", Figure: "Fig. 14", Paper: "the gain is much larger in mix 2 than in mix 1",
		Sim: strings.Join(parts, "; "), Verdict: verdict(ok)}
}

func (r *Report) ssd2AboveSSD1() claim {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, mix := range []Mix{mix1, mix2} {
		for _, u := range userCounts {
			d := find(r.Fig14, ssD2.Name, mix.Name, u).Grouped.Total - find(r.Fig14, ssD1.Name, mix.Name, u).Grouped.Total
			lo, hi = min(lo, d), max(hi, d)
		}
	}
	return claim{ID: "ssd2-above-ssd1", Figure: "Fig. 14", Paper: "with grouping SSD2 outperforms SSD1",
		Sim: fmt.Sprintf("SSD2 minus SSD1, grouped: %+.1f to %+.1f MB/s", lo, hi), Verdict: verdict(lo > 0)}
}

func (r *Report) ssdAboveHDD() claim {
	ok := true
	for _, mix := range []Mix{mix1, mix2} {
		for _, u := range userCounts {
			h := find(r.Fig14, hdd.Name, mix.Name, u).Gain
			ok = ok && find(r.Fig14, ssD1.Name, mix.Name, u).Gain > h && find(r.Fig14, ssD2.Name, mix.Name, u).Gain > h
		}
	}
	lo, hi := gainRange(r.Fig14, hdd.Name, mix2.Name)
	return claim{ID: "ssd-above-hdd", Figure: "Fig. 14", Paper: "grouping gains more on the SSDs than on the HDD",
		Sim: "HDD mix 2 " + gainText(lo, hi) + ", SSDs above it: " + fmt.Sprint(ok), Verdict: verdict(ok)}
}

// opRange is the gain range of one operation alone over devices and users.
func (r *Report) opRange(op Op, devs []Device) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, d := range devs {
		l, h := gainRange(r.Fig13, d.Name, only(op).Name)
		lo, hi = min(lo, l), max(hi, h)
	}
	return lo, hi
}

func (r *Report) levelOne() claim {
	lo, hi := r.opRange(1, devices())
	return claim{ID: "level1", Figure: "Fig. 13", Paper: "Play Level 1: grouping slightly lower (read-ahead lost when a user stops)",
		Sim: gainText(lo, hi), Verdict: verdict(hi < 0 && lo > -0.05)}
}

func (r *Report) writesSimilar() claim {
	lo, hi := r.opRange(opWrite, []Device{ssD1, ssD2})
	return claim{ID: "writes", Figure: "Fig. 13", Paper: "SSD writes: grouping similar to conventional",
		Sim: gainText(lo, hi), Verdict: verdict(lo > -0.1 && hi < 0.1)}
}

func (r *Report) highLevels() claim {
	lo3, hi3 := r.opRange(3, devices())
	lo5, hi5 := r.opRange(5, devices())
	return claim{ID: "high-levels", Figure: "Fig. 13", Paper: "Play Levels 3 and 5: grouping significantly better",
		Sim: "L3 " + gainText(lo3, hi3) + ", L5 " + gainText(lo5, hi5), Verdict: verdict(min(lo3, lo5) > 0.2)}
}

func (r *Report) bestS() claim {
	var parts []string
	v := "yes"
	for _, d := range []Device{ssD1, ssD2} {
		for _, mix := range []Mix{mix1, mix2} {
			b := r.bestBlock(d.Name, mix.Name).BlockKiB
			parts = append(parts, fmt.Sprintf("%s %s %d KB", d.Name, mix.Name, b))
			switch ratio := float64(b) / float64(d.Block>>10); {
			case ratio == 1:
			case ratio >= 0.5 && ratio <= 2 && v == "yes":
				v = "close"
			case ratio < 0.5 || ratio > 2:
				v = "no"
			}
		}
	}
	return claim{ID: "best-s", Figure: "Fig. 12", Paper: "best S: 128 KB on SSD1, 256 KB on SSD2",
		Sim: strings.Join(parts, ", "), Verdict: v}
}

func (r *Report) verdicts(m *mdw) {
	m.H(2, "The paper's claims")
	var rows [][]string
	for _, c := range r.Claims {
		rows = append(rows, []string{c.Figure, c.Paper, c.Sim, c.Verdict})
	}
	m.Table([]string{"figure", "paper (§IV text)", "strata sim", "reproduced"}, rows)
	m.P("FG's figures survive only as captions in the text this work starts from, so only what §IV states in words is compared; MB/s levels are not.")
}
