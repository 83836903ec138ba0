package builtin

import (
	"bytes"
	"context"
	"fmt"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/tools"
)

// Bounds on the work of one search (docs/search.md, "Limits").
//
// Go's regexp engine is linear in the input, but the factor is the size of
// the compiled program: its NFA may have one thread per instruction alive
// at every byte, ~15-20 ns each on one core. `.{0,1000}z` over a 64 KiB
// line is ~2,000 instructions times 64 Ki bytes, seconds of CPU in one
// call that cannot be interrupted. So the program size is capped, the
// input of one engine call is capped so that no call does more than
// regexWorkPerCall instruction-bytes (~10 ms), the context is checked
// between calls, and the whole search runs under tool_timeout_ms.
const (
	// maxQueryBytes caps the query as given, literal or regex.
	maxQueryBytes = 4096
	// maxRegexInsts caps the compiled program (after the line-semantics
	// rewrite): `[a-z]{1,900}` fits, `.{0,1000}.{0,1000}z` (4,003) does
	// not.
	maxRegexInsts = 2000
	// regexWorkPerCall is the most instruction-bytes one engine call may
	// get: the input of a call is at most regexWorkPerCall/insts bytes.
	regexWorkPerCall = 1 << 19
	// minRegexWindow and maxRegexWindow bound that input length.
	minRegexWindow = 512
	maxRegexWindow = 256 << 10
	// regexCallOverhead is what an engine call costs beyond its bytes,
	// in bytes: many short lines add up too.
	regexCallOverhead = 64
)

// programSize compiles the rewritten expression to count its instructions,
// refusing one over maxRegexInsts unless it is a literal query's.
func programSize(expr string, tree *syntax.Regexp, literal bool) (int, error) {
	prog, err := syntax.Compile(tree)
	if err != nil {
		return 0, &tools.ToolError{Msg: fmt.Sprintf("invalid regular expression %q: %v", clipQuery(expr), err)}
	}
	if n := len(prog.Inst); n > maxRegexInsts && !literal {
		return 0, &tools.ToolError{Msg: fmt.Sprintf("regular expression %q is too large: it compiles to %d instructions and the limit is %d, "+
			"because matching time grows with program size (large counted repetitions such as {1,1000} are what make it big); "+
			"use smaller repetition counts or a literal search", clipQuery(expr), n, maxRegexInsts)}
	}
	return len(prog.Inst), nil
}

func clipQuery(q string) string {
	if len(q) <= 200 {
		return q
	}
	i := 200
	for i > 0 && !utf8.RuneStart(q[i]) {
		i--
	}
	return q[:i] + "..."
}

// regexWindow is the most bytes handed to the engine in one call for a
// program of insts instructions.
func regexWindow(insts int) int {
	return min(max(regexWorkPerCall/max(insts, 1), minRegexWindow), maxRegexWindow)
}

// workMeter counts the engine's work in one scan and checks the context
// each time another regexWorkPerCall of it is done.
type workMeter struct {
	ctx     context.Context
	insts   int
	work    int
	stopped bool
}

func (w *workMeter) add(n int) { w.work += (n + regexCallOverhead) * w.insts }

// stop reports whether the scan must end (its context is done).
func (w *workMeter) stop() bool {
	if w.stopped {
		return true
	}
	if w.work >= regexWorkPerCall {
		w.work = 0
		w.stopped = w.ctx.Err() != nil
	}
	return w.stopped
}

func (m *lineRegexp) scan(buf []byte, fn func(start, end int) bool) {
	meter := &workMeter{ctx: m.ctx, insts: m.insts}
	if m.ctx.Err() != nil {
		return
	}
	if m.pre != nil && !(m.pre.needsUnicodeFold() && (bytes.Contains(buf, kelvinSign) || bytes.Contains(buf, longS))) {
		// Lines without the required literal are skipped by the byte
		// search; the regexp runs on the lines holding it.
		it := m.pre.iter(buf)
		for pos := 0; pos < len(buf); {
			if meter.stop() {
				return
			}
			c := it.next(pos)
			if c < 0 {
				return
			}
			meter.add(0) // a candidate costs at least a call
			ls, le := lineBounds(buf, pos, c)
			if !m.scanLine(buf, ls, le, fn, meter) {
				return
			}
			pos = le + 1
		}
		return
	}
	// Without a prefilter the regexp runs over chunks of whole lines of at
	// most window bytes; a line longer than that gets windows of its own.
	// The lines are the "\n"-separated pieces of buf[:n]: a final "\n"
	// ends the last line rather than starting an empty one (an empty file
	// has no line at all).
	if len(buf) == 0 {
		return
	}
	n := len(buf)
	if buf[n-1] == '\n' {
		n--
	}
	for pos := 0; pos <= n; {
		if meter.stop() {
			return
		}
		end := n
		if end-pos > m.window {
			i := bytes.LastIndexByte(buf[pos:pos+m.window], '\n')
			if i < 0 {
				// The line at pos is longer than a window.
				_, le := lineBounds(buf, pos, pos)
				if !m.scanLong(buf, pos, le, fn, meter) {
					return
				}
				pos = le + 1
				continue
			}
			end = pos + i
		}
		loc := m.re.FindIndex(buf[pos:end])
		meter.add(end - pos)
		if loc == nil {
			pos = end + 1
			continue
		}
		ls, le := lineBounds(buf, pos, pos+loc[0])
		if !m.scanLine(buf, ls, le, fn, meter) {
			return
		}
		pos = le + 1
	}
}

// scanLine reports the matches on the line buf[ls:le].
func (m *lineRegexp) scanLine(buf []byte, ls, le int, fn func(start, end int) bool, meter *workMeter) bool {
	if le-ls > m.window {
		return m.scanLong(buf, ls, le, fn, meter)
	}
	locs := m.re.FindAllIndex(buf[ls:le], -1)
	meter.add(le - ls)
	for _, loc := range locs {
		if !fn(ls+loc[0], ls+loc[1]) {
			return false
		}
	}
	return true
}

// scanLong reports the matches on a line longer than the window by running
// the regexp over overlapping windows of it: each window is m.window bytes
// (cut back to a character boundary), starts one character before its part
// of the line (so \b and ^ see the real preceding character), and reports
// the matches that start in its first three quarters and end before its
// end; the last quarter overlaps the next window. So a match up to a
// quarter window long is found exactly as a whole-line run finds it
// (TestScanLongEqualsWholeLine); a longer one may be missed, and
// near a window boundary the leftmost-first choice between overlapping
// matches may differ from a whole-line run. It returns false when fn or the
// meter stopped the scan.
func (m *lineRegexp) scanLong(buf []byte, ls, le int, fn func(start, end int) bool, meter *workMeter) bool {
	step := m.window - m.window/4
	prevEnd := -1 // end of the last reported match
	for a := ls; a < le; {
		if meter.stop() {
			return false
		}
		ws := a
		if a > ls {
			ws = runeStartBefore(buf, ls, a-1)
		}
		we, next := le, le
		if a+m.window < le {
			we = runeStartBefore(buf, a+1, a+m.window)
			next = runeStartBefore(buf, a+1, a+step)
		}
		last := we == le
		locs := m.re.FindAllIndex(buf[ws:we], -1)
		meter.add(we - ws)
		for _, loc := range locs {
			s, e := ws+loc[0], ws+loc[1]
			if s >= next && !last {
				break
			}
			// Before a (the context character), inside the last reported
			// match, or an empty match right after it: not a new match.
			if s < a || s < prevEnd || (s == e && s == prevEnd) {
				continue
			}
			// Ending at the cut: maybe cut short, or an artifact of the
			// cut ($ and \b see the window's end as the line's). Such a
			// match is at least the overlap long; the next window finds
			// it if it is shorter than a window.
			if e == we && !last {
				continue
			}
			if !fn(s, e) {
				return false
			}
			prevEnd = e
		}
		a = next
	}
	return true
}

// runeStartBefore moves i back to the start of the UTF-8 sequence holding
// it, not below lo.
func runeStartBefore(buf []byte, lo, i int) int {
	for k := 0; k < utf8.UTFMax-1 && i > lo && !utf8.RuneStart(buf[i]); k++ {
		i--
	}
	return i
}
