package builtin

import (
	"bytes"
	"container/heap"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/support/safetext"
)

// collector keeps the first k matches in (file, line, col) order while
// files are searched in parallel and in no fixed order. It holds the
// matches of the files with the smallest paths seen so far, at least k of
// them when that many exist; once it has k, the largest kept path is the
// cutoff, and a file whose path sorts after it cannot contribute, so its
// worker only counts matches and materializes no text.
type collector struct {
	k      int
	mu     sync.Mutex
	files  fileHeap
	kept   int
	cutoff atomic.Pointer[string]
}

type fileHits struct {
	path string
	hits []SearchMatch
}

// fileHeap is a max-heap of files by path.
type fileHeap []fileHits

func (h fileHeap) Len() int           { return len(h) }
func (h fileHeap) Less(i, j int) bool { return h[i].path > h[j].path }
func (h fileHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fileHeap) Push(x any)        { *h = append(*h, x.(fileHits)) }
func (h *fileHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = fileHits{}
	*h = old[:len(old)-1]
	return x
}

// wants reports whether matches of the file at path may be among the first k.
func (c *collector) wants(path string) bool {
	p := c.cutoff.Load()
	return p == nil || path < *p
}

// add offers the first matches (at most k) of one file.
func (c *collector) add(path string, hits []SearchMatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.wants(path) {
		return // the cutoff moved below path while the file was searched
	}
	heap.Push(&c.files, fileHits{path: path, hits: hits})
	c.kept += len(hits)
	for len(c.files) > 0 && c.kept-len(c.files[0].hits) >= c.k {
		c.kept -= len(c.files[0].hits)
		heap.Pop(&c.files)
	}
	if c.kept >= c.k {
		p := c.files[0].path
		c.cutoff.Store(&p)
	}
}

// result returns the first k matches in order.
func (c *collector) result() []SearchMatch {
	c.mu.Lock()
	defer c.mu.Unlock()
	files := slices.Clone([]fileHits(c.files))
	slices.SortFunc(files, func(a, b fileHits) int { return strings.Compare(a.path, b.path) })
	out := make([]SearchMatch, 0, min(c.kept, c.k))
	for _, f := range files {
		for _, h := range f.hits {
			if len(out) == c.k {
				return out
			}
			out = append(out, h)
		}
	}
	return out
}

// cancelCheckMatches is how many matches a scan reports between checks of
// the context.
const cancelCheckMatches = 1 << 14

// collectHits scans data and returns its first k matches with line, column
// and text, and the number of all matches. It stops early when ctx is done.
func collectHits(ctx context.Context, m matcher, path string, data []byte, k int) ([]SearchMatch, int) {
	var hits []SearchMatch
	n := 0
	line := 1
	counted := 0    // line holds the line number of position counted
	ls, le := 0, -1 // the current line [ls, le); le < 0: none yet
	m.scan(data, func(s, e int) bool {
		n++
		if n%cancelCheckMatches == 0 && ctx.Err() != nil {
			return false
		}
		if len(hits) >= k {
			return true
		}
		if le < 0 || s > le {
			line += bytes.Count(data[counted:s], nl)
			counted = s
			ls, le = lineBounds(data, 0, s)
		}
		hits = append(hits, SearchMatch{
			File: safetext.ValidUTF8(path),
			Line: line,
			Col:  s - ls + 1,
			Text: lineText(data[ls:le], s-ls),
		})
		return true
	})
	return hits, n
}

var nl = []byte{'\n'}

// maxTextBytes caps a match's text. Longer lines (minified files, data)
// are cut to a window of about this many bytes around the match, marked
// with "…" at each cut end; col still counts from the real line start.
const maxTextBytes = 512

// lineText returns the line for a match starting at ms of line: without its
// "\r" ending, cut to maxTextBytes around the match, and valid UTF-8
// (invalid bytes become U+FFFD, as JSON strings must be UTF-8).
func lineText(line []byte, ms int) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) <= maxTextBytes {
		return safetext.ValidUTF8(string(line))
	}
	// Show some context before the match, then as much of the match and
	// what follows as fits.
	start := max(0, ms-maxTextBytes/4)
	end := min(len(line), start+maxTextBytes)
	start = max(0, min(start, end-maxTextBytes))
	for start > 0 && start < len(line) && !utf8.RuneStart(line[start]) {
		start++
	}
	for end < len(line) && end > start && !utf8.RuneStart(line[end]) {
		end--
	}
	var sb strings.Builder
	if start > 0 {
		sb.WriteString("…")
	}
	sb.WriteString(safetext.ValidUTF8(string(line[start:end])))
	if end < len(line) {
		sb.WriteString("…")
	}
	return sb.String()
}
