package flashstream

import (
	"strings"
	"testing"
)

// fakeReport is a report with the given Fig. 7 maximum rates (LRU,
// LFU-Mean, LFU-Median, ZFS, flashcache), fill times and ZFS + read
// priority rate, and no other experiment.
func fakeReport(rates [5]float64, fills [5]float64, zfsRP float64) *Report {
	names := []string{"FlashStream(LRU)", "FlashStream(LFU-Mean)", "FlashStream(LFU-Median)", "ZFS", "Flashcache"}
	r := &Report{Bound: Bound{Achieved: map[string]float64{}}}
	for i, n := range names {
		r.Fig7 = append(r.Fig7, maxResult{System: n, MaxRPS: rates[i]})
		r.Fill = append(r.Fill, fillCurve{System: n, FillMinutes: fills[i], Rate: 20})
	}
	r.Beyond = []maxResult{{System: "ZFS + read priority", MaxRPS: zfsRP}}
	return r
}

// The conclusions of the notes follow the numbers, both ways.
func TestNotesFollowNumbers(t *testing.T) {
	for _, c := range []struct {
		name   string
		r      *Report
		want   []string
		reject []string
	}{
		{"as at small scale", fakeReport([5]float64{93, 98, 98, 42, 14}, [5]float64{10, 10, 10, 57, 82}, 43), []string{
			"here both LFU variants are ahead", "by more than 5%", "changes little", "It is the slowest system here",
			"does not collapse", "keep the paper's order"}, []string{"LRU is ahead"}},
		{"as in the paper", fakeReport([5]float64{52, 51, 50, 26, 0}, [5]float64{94, 94, 94, 1200, 1320}, 35), []string{
			"here LRU is ahead of both LFU variants, as in the paper", "within 5%", "changes the maximum rate by more than 5%",
			"It collapses as the paper's did", "keep the paper's order"}, []string{"LFU variants are ahead", "does not collapse"}},
		{"reversed", fakeReport([5]float64{50, 60, 40, 30, 45}, [5]float64{300, 10, 10, 200, -1}, 30), []string{
			"LRU sits between the LFU variants", "It is not the slowest system here", "do not keep the paper's order"},
			[]string{"It is the slowest"}},
	} {
		var m md
		c.r.notes(&m)
		got := m.String()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: notes lack %q:\n%s", c.name, w, got)
			}
		}
		for _, w := range c.reject {
			if strings.Contains(got, w) {
				t.Errorf("%s: notes say %q:\n%s", c.name, w, got)
			}
		}
	}
}
