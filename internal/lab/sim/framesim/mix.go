package framesim

import (
	"fmt"
	"strings"

	"github.com/strata-media/strata/internal/core/framegroup"
)

// An Op is what a user does: upload (write) a title, or play at a level.
type Op int

// opWrite uploads titles; Op(1) to Op(5) play at Level 1 to 5.
const opWrite Op = 0

// numOps is the number of operations: write and the five play levels.
const numOps = 6

// Level is the play level of a play operation.
func (o Op) Level() framegroup.Level { return framegroup.Level(o) }

// String returns "write" or "L1" to "L5".
func (o Op) String() string {
	if o == opWrite {
		return "write"
	}
	return fmt.Sprintf("L%d", int(o))
}

// A Mix is the share of users doing each operation, indexed by Op.
type Mix struct {
	Name   string
	Shares [numOps]float64
}

// Mix1 and Mix2 are FG §IV's two mixes (Figs. 12 and 14), "the request
// ratio for write and Play Levels 1, 2, 3, 4, and 5". Mix 2 is printed in
// full, 0.1 : 0.3 : 0.15 : 0.15 : 0.15 : 0.15. Mix 1 is printed, twice,
// with five numbers for six operations, 0.1 : 0.5 : 0.1 : 0.1 : 0.1,
// summing to 0.9; it is read as write 0.1, L1 0.5 and L2-L5 0.1 each,
// which sums to 1 and matches FG's explanation of why mix 2 gains more
// (mix 1 has more Play Level 1, where grouping is slightly worse).
var (
	mix1 = Mix{Name: "mix 1", Shares: [numOps]float64{0.1, 0.5, 0.1, 0.1, 0.1, 0.1}}
	mix2 = Mix{Name: "mix 2", Shares: [numOps]float64{0.1, 0.3, 0.15, 0.15, 0.15, 0.15}}
)

// only is the mix in which every user does op (FG Fig. 13).
func only(op Op) Mix {
	m := Mix{Name: op.String() + " only"}
	m.Shares[op] = 1
	return m
}

// String formats the shares as the paper does, "0.1 : 0.3 : ...".
func (m Mix) String() string {
	parts := make([]string, numOps)
	for i, s := range m.Shares {
		parts[i] = fmt.Sprintf("%g", s)
	}
	return strings.Join(parts, " : ")
}

// Assign gives each of n users an operation so that the counts follow the
// shares (largest remainder; ties go to the lower op), users ordered by op.
func (m Mix) Assign(n int) []Op {
	var total float64
	for _, s := range m.Shares {
		total += s
	}
	counts, rems := [numOps]int{}, [numOps]float64{}
	left := n
	for i, s := range m.Shares {
		exact := float64(n) * s / total
		counts[i] = int(exact)
		rems[i] = exact - float64(counts[i])
		left -= counts[i]
	}
	for ; left > 0; left-- {
		best := 0
		for i := range rems {
			if rems[i] > rems[best]+1e-9 {
				best = i
			}
		}
		counts[best]++
		rems[best] = -1
	}
	ops := make([]Op, 0, n)
	for i, c := range counts {
		for range c {
			ops = append(ops, Op(i))
		}
	}
	return ops
}
