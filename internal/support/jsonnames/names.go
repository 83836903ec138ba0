// Package jsonnames finds, in one linear pass, a JSON object that holds two
// member names which are equal or differ only by case. It is a leaf: the
// request parser (internal/jsonrpc) and the reader of upstream results
// (internal/tools) both refuse such JSON.
package jsonnames

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Collision describes the first JSON object in data, at any depth, that holds
// two member names which are equal or differ only by case (Unicode simple
// case folding, as strings.EqualFold compares: "path", "Path" and "PATH"
// collide, and so do "k" and the Kelvin sign "\u212a").
//
// Why every object and not only the members clawd reads: a name clawd
// ignores today may be read by another decoder tomorrow (a tool that takes
// a map, an upstream server, a decoder that matches names case-insensitively
// and lets the last one win), and then two readers of the same message
// would see different values. Refusing the message outright leaves nothing
// to disagree about. The price is that an object whose names legitimately
// differ only by case (a map of case-sensitive keys) cannot be sent.
//
// Parse runs it on every message; ParseCallResult (internal/tools) on an
// upstream server's result, which reaches clients the same way.
//
// data must be valid JSON (Parse checks that first). The check is one pass
// over the bytes: strings are skipped with bytes.IndexByte, and each object
// compares its names pairwise while it is small and through a seeded hash
// index once it has more than smallObject members, so a hostile object with
// many members costs linear time.
func Collision(data []byte) string {
	c := checkers.Get().(*nameChecker)
	c.data = data
	e := c.run()
	c.data = nil
	clear(c.frames[:cap(c.frames)]) // drop the maps of wide objects
	c.frames = c.frames[:0]
	c.names = c.names[:0]
	if cap(c.names) <= 1024 {
		checkers.Put(c)
	}
	return e
}

// checkers reuses the checkers' stacks, so a small message costs no
// allocation. A checker keeps no reference to a message once returned.
var checkers = sync.Pool{New: func() any { return new(nameChecker) }}

// smallObject is the member count up to which names are compared pairwise;
// past it, an object indexes its names by a seeded hash of their folded
// form.
const smallObject = 16

// hashSeed is random per process, so a client cannot craft names whose
// hashes collide and push an object back to pairwise comparison.
var hashSeed = maphash.MakeSeed()

type nameChecker struct {
	data    []byte
	frames  []frame
	names   []memberName // the names of every open object, innermost last
	scratch []byte
}

// frame is one open object or array, with what the pointer to its current
// child needs.
type frame struct {
	object bool
	first  int              // object: index in names of its first member
	index  int              // array: the current element's index
	set    map[uint64]int32 // object past smallObject: hash of folded name -> index in names
}

// memberName is an object member's name as data[start:end] (with quotes),
// and its folded form once computed.
type memberName struct {
	start, end int
	plain      bool // only ASCII, no escapes: compared without folding to a string
	key        string
}

func (c *nameChecker) run() string {
	data := c.data
	expectName := false
	for i := 0; i < len(data); {
		switch data[i] {
		case '{':
			c.frames = append(c.frames, frame{object: true, first: len(c.names)})
			expectName = true
			i++
		case '[':
			c.frames = append(c.frames, frame{})
			i++
		case '}':
			f := &c.frames[len(c.frames)-1]
			c.names = c.names[:f.first]
			f.set = nil
			c.frames = c.frames[:len(c.frames)-1]
			expectName = false
			i++
		case ']':
			c.frames = c.frames[:len(c.frames)-1]
			i++
		case ',':
			if f := &c.frames[len(c.frames)-1]; f.object {
				expectName = true
			} else {
				f.index++
			}
			i++
		case '"':
			end := stringEnd(data, i)
			if expectName {
				expectName = false
				if e := c.add(i, end); e != "" {
					return e
				}
			}
			i = end
		default:
			i++
		}
	}
	return ""
}

// stringEnd returns the index just past the string starting at data[i].
func stringEnd(data []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data) // cannot happen in valid JSON
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && data[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// add records the member name data[start:end] of the innermost object, or
// reports the collision it makes.
func (c *nameChecker) add(start, end int) string {
	f := &c.frames[len(c.frames)-1]
	n := memberName{start: start, end: end, plain: isPlain(c.data[start+1 : end-1])}
	if f.set == nil && len(c.names)-f.first < smallObject {
		for j := f.first; j < len(c.names); j++ {
			if c.same(&c.names[j], &n) {
				return c.collision(&c.names[j], &n)
			}
		}
		c.names = append(c.names, n)
		return ""
	}
	if f.set == nil {
		f.set = make(map[uint64]int32, 4*smallObject)
		for j := f.first; j < len(c.names); j++ {
			if h := c.hash(&c.names[j]); f.set[h] == 0 {
				f.set[h] = int32(j + 1)
			}
		}
	}
	h := c.hash(&n)
	if j := f.set[h]; j != 0 {
		// Equal hashes: the same folded name, or (as good as never with a
		// random seed) two different names; then compare with them all.
		if c.same(&c.names[j-1], &n) {
			return c.collision(&c.names[j-1], &n)
		}
		for k := f.first; k < len(c.names); k++ {
			if c.same(&c.names[k], &n) {
				return c.collision(&c.names[k], &n)
			}
		}
	} else {
		f.set[h] = int32(len(c.names) + 1)
	}
	c.names = append(c.names, n)
	return ""
}

// hash is the seeded hash of a name's folded form.
func (c *nameChecker) hash(n *memberName) uint64 {
	if !n.plain {
		return maphash.String(hashSeed, c.folded(n))
	}
	b := append(c.scratch[:0], c.data[n.start+1:n.end-1]...)
	for i, x := range b {
		if 'a' <= x && x <= 'z' {
			b[i] = x - ('a' - 'A')
		}
	}
	c.scratch = b
	return maphash.Bytes(hashSeed, b)
}

func (c *nameChecker) same(a, b *memberName) bool {
	if a.plain && b.plain {
		return a.end-a.start == b.end-b.start && asciiEqualFold(c.data[a.start:a.end], c.data[b.start:b.end])
	}
	return c.folded(a) == c.folded(b)
}

// folded is the name unquoted with every rune replaced by the smallest rune
// of its case-folding orbit (upper case for ASCII letters), so two names
// fold equal exactly when strings.EqualFold says they are equal.
func (c *nameChecker) folded(n *memberName) string {
	if n.key != "" || n.end-n.start == 2 {
		return n.key
	}
	s, err := jsontext.AppendUnquote(nil, c.data[n.start:n.end])
	if err != nil {
		s = c.data[n.start:n.end] // not reached for valid JSON
	}
	b := make([]byte, 0, len(s))
	for _, r := range string(s) {
		b = utf8.AppendRune(b, foldRune(r))
	}
	n.key = string(b)
	return n.key
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		low = min(low, f)
	}
	return low
}

func isPlain(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

func asciiEqualFold(a, b []byte) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// collision is the -32600 error for two names of the innermost object.
func (c *nameChecker) collision(first, second *memberName) string {
	a, b := c.unquoted(first), c.unquoted(second)
	where := "at the top level"
	if p := c.pointer(); p != "" {
		where = "in " + strconv.Quote(p)
	}
	if a == b {
		return "duplicate member name " + quoteClipped(a) + " " + where +
			"; each name may appear once in an object"
	}
	return "member names " + quoteClipped(a) + " and " + quoteClipped(b) + " " + where +
		" differ only by case; names are case-sensitive and an object may not hold both (a reader matching names case-insensitively would pick one), so send only the intended one"
}

// pointer is the JSON Pointer (RFC 6901) of the innermost open object.
func (c *nameChecker) pointer() string {
	var sb strings.Builder
	for i, f := range c.frames[:len(c.frames)-1] {
		sb.WriteByte('/')
		if !f.object {
			sb.WriteString(strconv.Itoa(f.index))
			continue
		}
		// The member being read is the object's last recorded name.
		name := c.unquoted(&c.names[c.openNamesEnd(i+1)-1])
		name = strings.ReplaceAll(name, "~", "~0")
		sb.WriteString(strings.ReplaceAll(name, "/", "~1"))
	}
	return sb.String()
}

// openNamesEnd is where the names of the objects from frame i inward start:
// the end of the names of the object enclosing frame i.
func (c *nameChecker) openNamesEnd(i int) int {
	for ; i < len(c.frames); i++ {
		if c.frames[i].object {
			return c.frames[i].first
		}
	}
	return len(c.names)
}

func (c *nameChecker) unquoted(n *memberName) string {
	raw := c.data[n.start:n.end]
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return string(raw)
	}
	return string(s)
}

// quoteClipped quotes a client-chosen name for an error message, cut to a
// readable length.
func quoteClipped(s string) string {
	const max = 80
	if len(s) > max {
		i := max
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return strconv.Quote(s[:i]) + "..."
	}
	return strconv.Quote(s)
}
