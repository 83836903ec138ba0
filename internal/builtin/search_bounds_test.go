package builtin

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// On a line longer than the window, the windowed scan finds exactly what
// one whole-line run finds, as long as matches are shorter than the
// windows' overlap: the boundaries cut no match, \b and ^ see the real
// preceding character, and empty matches follow FindAll's rule.
func TestScanLongEqualsWholeLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"word", " ", "12", "x", "xx", "é", "ab", "\t", "z", "wordy", "9"}
	var b strings.Builder
	for b.Len() < 20000 {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	line := []byte(b.String())
	for _, expr := range []string{`\bword\b`, `[0-9]+`, `^word`, `z$`, `é+`, `x*`, `\w+`, `(?i)WORD`, `[^ ]`, `a?b`} {
		m, err := compileLine(context.Background(), expr, true, false)
		if err != nil {
			t.Fatal(err)
		}
		m.pre = nil // run the regexp on every window, not only candidates
		var want [][2]int
		longest := 0
		for _, loc := range m.re.FindAllIndex(line, -1) {
			want = append(want, [2]int{loc[0], loc[1]})
			longest = max(longest, loc[1]-loc[0])
		}
		for _, w := range []int{64, 100, 1000} {
			if longest > w/4 {
				continue // matches may be cut at a window's end: documented
			}
			m.window = w
			var got [][2]int
			meter := &workMeter{ctx: context.Background(), insts: m.insts}
			m.scanLong(line, 0, len(line), func(s, e int) bool { got = append(got, [2]int{s, e}); return true }, meter)
			if !slices.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Errorf("%s, window %d: %d matches, whole line %d; first difference at #%d: got %v want %v",
					expr, w, len(got), len(want), i, at(got, i), at(want, i))
			}
		}
	}
}

func at(s [][2]int, i int) any {
	if i < len(s) {
		return s[i]
	}
	return "none"
}
