package hostadapter

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tailscale/hujson"

	"github.com/clawde/clawd/internal/support/secrets"
)

// Diff returns a unified diff (3 lines of context) from before to after,
// labelled with name; "" when they are equal. nil stands for no file.
// String values of before on the lines shown that look secret (an API key kept in
// ~/.claude.json, a token in another server's env or headers) are shown as
// ***: the diff shows the lines around clawd's entry, and a one-line file
// whole.
func Diff(name string, before, after []byte) string {
	if string(before) == string(after) && (before == nil) == (after == nil) {
		return ""
	}
	a, b := splitLines(before), splitLines(after)
	// A name with a control character (a newline in a directory an
	// archive named) or invalid UTF-8 is quoted, with Go's escapes (git
	// quotes such a name too, in C style with octal bytes): left as is, it
	// would add lines that read as the diff's own.
	if strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name) {
		name = strconv.Quote(name)
	}
	from, to := name, name
	if before == nil {
		from = "/dev/null"
	}
	if after == nil {
		to = "/dev/null"
	}
	ops := diffLines(a, b)
	type hunk struct{ start, end, aStart, bStart, aN, bN int }
	var hunks []hunk
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(ops) {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		h := hunk{start: start, end: end, aStart: ops[start].a, bStart: ops[start].b}
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				h.aN++
			}
			if op.kind != '-' {
				h.bN++
			}
		}
		hunks = append(hunks, h)
		i = end
	}
	// The values are looked for in before, on the lines shown: what after
	// adds is clawd's entry, and a line of the user's it changes (a comma
	// added) is shown from before too.
	var shown [][2]int
	off := lineOffsets(a)
	for _, h := range hunks {
		shown = append(shown, [2]int{off[h.aStart], off[h.aStart+h.aN]})
	}
	hide := secretValues(before, shown)
	sort.Slice(hide, func(i, j int) bool { return len(hide[i]) > len(hide[j]) })
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	for _, h := range hunks {
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(h.aStart, h.aN), hunkRange(h.bStart, h.bN))
		for _, op := range ops[h.start:h.end] {
			text := op.text
			for _, v := range hide {
				text = strings.ReplaceAll(text, v, secrets.Masked)
			}
			out.WriteByte(op.kind)
			out.WriteString(text)
			if !strings.HasSuffix(op.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return out.String()
}

// lineOffsets returns the byte offset at which each line starts, and the
// length of the text last.
func lineOffsets(lines []string) []int {
	off := make([]int, len(lines)+1)
	for i, l := range lines {
		off[i+1] = off[i] + len(l)
	}
	return off
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	text string
	a, b int // line index in before and after where the op starts
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines is a longest-common-subsequence line diff after trimming the
// common head and tail; config files are small, so O(n·m) on the rest is fine.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		ops = append(ops, diffOp{' ', a[p], p, p})
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	lcs := make([][]int, len(ma)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(mb)+1)
	}
	for i := len(ma) - 1; i >= 0; i-- {
		for j := len(mb) - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(ma) || j < len(mb) {
		switch {
		case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
			ops = append(ops, diffOp{' ', ma[i], p + i, p + j})
			i++
			j++
		case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', ma[i], p + i, p + j})
			i++
		default:
			ops = append(ops, diffOp{'+', mb[j], p + i, p + j})
			j++
		}
	}
	for k := 0; k < s; k++ {
		ops = append(ops, diffOp{' ', a[len(a)-s+k], len(a) - s + k, len(b) - s + k})
	}
	return ops
}

// secretValues returns the raw text (as written in src, without quotes) of
// the string values on the shown byte ranges of src that secrets.MaskText
// would hide, seen with their member name ("primaryApiKey": "sk-...") or,
// in an array, with the element before them ("--token", "..."). OpenCode's
// {file:PATH} and {env:NAME} references are not secrets. Values under 4
// bytes are left: replacing them would garble the rest of the diff.
func secretValues(src []byte, shown [][2]int) []string {
	if len(src) == 0 || len(shown) == 0 {
		return nil
	}
	root, err := parseJSONC(src)
	if err != nil {
		return nil
	}
	var out []string
	var walk func(v *hujson.Value, context string)
	walk = func(v *hujson.Value, context string) {
		switch x := v.Value.(type) {
		case *hujson.Object:
			for i := range x.Members {
				m := &x.Members[i]
				name, _ := m.Name.Value.(hujson.Literal)
				walk(&m.Value, string(name))
			}
		case *hujson.Array:
			prev := context
			for i := range x.Elements {
				walk(&x.Elements[i], prev)
				if lit, ok := x.Elements[i].Value.(hujson.Literal); ok {
					prev = string(lit)
				}
			}
		case hujson.Literal:
			if x.Kind() != '"' || len(x) < 6 || !overlaps(shown, v.StartOffset, v.EndOffset) {
				return
			}
			lit := string(x)
			if openCodeRef.MatchString(lit) {
				return
			}
			line := context + ": " + lit
			if !strings.HasSuffix(secrets.MaskText(line), lit) || secrets.MaskText(lit) != lit {
				out = append(out, lit[1:len(lit)-1])
			}
		}
	}
	walk(&root, "")
	return out
}

// openCodeRef is a JSON string that only names where OpenCode reads a
// value from, with an optional auth scheme: "Bearer {file:PATH}".
var openCodeRef = regexp.MustCompile(`^"(?:Bearer )?\{(?:file|env):[^{}"]*\}"$`)

func overlaps(ranges [][2]int, start, end int) bool {
	for _, r := range ranges {
		if start < r[1] && r[0] < end {
			return true
		}
	}
	return false
}
