package hostadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// The editor below changes one member of one object in a JSON or JSONC
// (JSON with comments and trailing commas) file by splicing text, so every
// byte outside that member stays as the user wrote it: comments, key order,
// indentation, odd spacing. hujson parses the file and gives the offsets;
// its own Patch is not used because it drops the whitespace and trailing
// commas around the members it adds or removes.

// parseObjectAt parses src and returns the object at path (a list of member
// names from the root), or nil when some level is missing. missing is the
// index in path of the first absent level.
func parseObjectAt(src []byte, path []string) (root hujson.Value, obj *hujson.Value, missing int, err error) {
	root, err = parseJSONC(src)
	if err != nil {
		return root, nil, 0, fmt.Errorf("not valid JSON: %v", err)
	}
	cur := &root
	for i := 0; ; i++ {
		o, ok := cur.Value.(*hujson.Object)
		if !ok {
			where := "the top level"
			if i > 0 {
				where = "\"" + strings.Join(path[:i], ".") + "\""
			}
			return root, nil, 0, fmt.Errorf("%s is %s, not an object", where, kindName(cur.Value.Kind()))
		}
		if i == len(path) {
			return root, cur, -1, nil
		}
		m := findMember(o, path[i])
		if m < 0 {
			return root, cur, i, nil
		}
		cur = &o.Members[m].Value
	}
}

// kindName is the JSON type of k with its article ("an array", "null"),
// as a message says what it found.
func kindName(k hujson.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// findMember returns the index of the last member called name (JSON parsers
// keep the last of duplicate keys), or -1.
func findMember(o *hujson.Object, name string) int {
	for i := len(o.Members) - 1; i >= 0; i-- {
		var s string
		if lit, ok := o.Members[i].Name.Value.(hujson.Literal); ok && json.Unmarshal(lit, &s) == nil && s == name {
			return i
		}
	}
	return -1
}

// parseJSONC parses src with offsets into src. hujson refuses a byte order
// mark, and a // comment that ends the file without a newline: three spaces
// in place of the mark and a newline after the end keep every offset, and
// the splices copy the bytes from src.
func parseJSONC(src []byte) (hujson.Value, error) {
	if err := CheckNesting(src); err != nil {
		return hujson.Value{}, err
	}
	text := append(bytes.Clone(src), '\n')
	if bytes.HasPrefix(text, bom) {
		copy(text, "   ")
	}
	return hujson.Parse(text)
}

// MaxNesting is how deep objects and arrays may nest in a client's file.
// Configs nest a handful of levels; the parser recurses once per level, so
// a file of millions of '[' (one from a cloned repository) would exhaust
// the stack, which Go does not recover from.
const MaxNesting = 1000

// CheckNesting refuses JSON or JSONC nested deeper than MaxNesting,
// counting brackets outside strings and comments in one pass.
func CheckNesting(src []byte) error {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return nil // unterminated: the parser reports it
			}
			i += end + 3
		case c == '[' || c == '{':
			if depth++; depth > MaxNesting {
				return fmt.Errorf("nested more than %d levels deep at byte %d; that is no client config", MaxNesting, i)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// bom is the UTF-8 byte order mark some Windows editors put first; VS Code
// and OpenCode read files that start with one.
var bom = []byte("\ufeff")

// blank reports whether src holds no JSON at all (a byte order mark and
// whitespace at most).
func blank(src []byte) bool {
	return len(bytes.TrimSpace(bytes.TrimPrefix(src, bom))) == 0
}

// eol converts the line breaks of text spliced into src to src's own: a
// file whose first line ends in CRLF gets CRLF, so it does not end up with
// mixed endings.
func eol(src []byte, text string) string {
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		return strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text
}

// GetMember returns the compact JSON of member name in the object at path.
func GetMember(src []byte, path []string, name string) ([]byte, bool, error) {
	if blank(src) {
		return nil, false, nil
	}
	_, obj, missing, err := parseObjectAt(src, path)
	if err != nil || missing >= 0 {
		return nil, false, err
	}
	o := obj.Value.(*hujson.Object)
	i := findMember(o, name)
	if i < 0 {
		return nil, false, nil
	}
	v := o.Members[i].Value
	raw := src[v.StartOffset:v.EndOffset]
	std, err := hujson.Standardize(append([]byte(nil), raw...))
	if err != nil {
		return nil, false, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, std); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}

// SetMember sets member name of the object at path to value (compact JSON),
// creating the missing objects on the way. An existing member's value is
// replaced in place; a new member goes after the object's last member.
// Empty src starts a new document.
func SetMember(src []byte, path []string, name string, value []byte) ([]byte, error) {
	if blank(src) {
		doc := newDocument(path, name, value)
		if bytes.HasPrefix(src, bom) {
			doc = append(bytes.Clone(bom), doc...)
		}
		return doc, nil
	}
	_, obj, missing, err := parseObjectAt(src, path)
	if err != nil {
		return nil, err
	}
	if missing >= 0 {
		// Nest the value in the absent levels and add the outermost one.
		v := []byte(fmt.Sprintf("{%s:%s}", quote(name), value))
		for i := len(path) - 1; i > missing; i-- {
			v = []byte(fmt.Sprintf("{%s:%s}", quote(path[i]), v))
		}
		return insertMember(src, obj, path[missing], v), nil
	}
	o := obj.Value.(*hujson.Object)
	if i := findMember(o, name); i >= 0 {
		m := o.Members[i].Value
		indent := lineIndent(src, o.Members[i].Name.StartOffset)
		out := append([]byte(nil), src[:m.StartOffset]...)
		out = append(out, eol(src, string(render(value, indent, indentUnit(src))))...)
		return append(out, src[m.EndOffset:]...), nil
	}
	return insertMember(src, obj, name, value), nil
}

func newDocument(path []string, name string, value []byte) []byte {
	v := []byte(fmt.Sprintf("{%s:%s}", quote(name), value))
	for i := len(path) - 1; i >= 0; i-- {
		v = []byte(fmt.Sprintf("{%s:%s}", quote(path[i]), v))
	}
	return append(render(v, "", "  "), '\n')
}

// insertMember adds "name": value as the last member of obj.
func insertMember(src []byte, obj *hujson.Value, name string, value []byte) []byte {
	o := obj.Value.(*hujson.Object)
	unit := indentUnit(src)
	var at int
	var indent, text string
	if n := len(o.Members); n > 0 {
		last := o.Members[n-1]
		indent = lineIndent(src, last.Name.StartOffset)
		if !startsLine(src, last.Name.StartOffset) {
			indent = lineIndent(src, obj.StartOffset) + unit
		}
		at = last.Value.EndOffset
		text = ",\n" + indent + quote(name) + ": " + string(render(value, indent, unit))
	} else {
		outer := lineIndent(src, obj.StartOffset)
		indent = outer + unit
		at = obj.StartOffset + 1
		text = "\n" + indent + quote(name) + ": " + string(render(value, indent, unit))
		if len(bytes.TrimSpace(src[at:obj.EndOffset-1])) == 0 {
			// Only whitespace inside: replace it so the brace closes on its own line.
			out := append([]byte(nil), src[:at]...)
			out = append(out, eol(src, text+"\n"+outer)...)
			return append(out, src[obj.EndOffset-1:]...)
		}
	}
	out := append([]byte(nil), src[:at]...)
	out = append(out, eol(src, text)...)
	return append(out, src[at:]...)
}

// RemoveMember deletes member name of the object at path and the separator
// that belonged to it. It reports whether there was such a member.
func RemoveMember(src []byte, path []string, name string) ([]byte, bool, error) {
	if blank(src) {
		return src, false, nil
	}
	_, obj, missing, err := parseObjectAt(src, path)
	if err != nil || missing >= 0 {
		return src, false, err
	}
	o := obj.Value.(*hujson.Object)
	i := findMember(o, name)
	if i < 0 {
		return src, false, nil
	}
	m := o.Members[i]
	var from, to int
	switch {
	case i > 0:
		// From the comma after the previous member to the end of this value:
		// what follows (a comma, comments, the closing brace) stays.
		from = commaAfter(src, o.Members[i-1].Value.EndOffset)
		to = m.Value.EndOffset
	case len(o.Members) > 1:
		from = m.Name.StartOffset
		to = o.Members[1].Name.StartOffset
	default:
		from = obj.StartOffset + 1
		to = m.Value.EndOffset
		if c := commaAfter(src, to); c < obj.EndOffset-1 && src[c] == ',' {
			to = c + 1
		}
	}
	out := append([]byte(nil), src[:from]...)
	return append(out, src[to:]...), true, nil
}

// commaAfter returns the offset of the first comma at or after n that is not
// inside a comment (hujson already checked the syntax).
func commaAfter(src []byte, n int) int {
	for n < len(src) {
		switch {
		case src[n] == ',':
			return n
		case bytes.HasPrefix(src[n:], []byte("//")):
			for n < len(src) && src[n] != '\n' {
				n++
			}
		case bytes.HasPrefix(src[n:], []byte("/*")):
			end := bytes.Index(src[n+2:], []byte("*/"))
			if end < 0 {
				return len(src)
			}
			n += end + 4
		default:
			n++
		}
	}
	return n
}

// lineIndent returns the whitespace that starts the line holding offset n.
func lineIndent(src []byte, n int) string {
	start := bytes.LastIndexByte(src[:n], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

func startsLine(src []byte, n int) bool {
	start := bytes.LastIndexByte(src[:n], '\n') + 1
	return len(bytes.TrimLeft(src[start:n], " \t")) == 0
}

// indentUnit guesses the file's indentation step from its first indented
// line: a tab, or that line's spaces; two spaces when nothing is indented.
func indentUnit(src []byte) string {
	for _, line := range bytes.Split(src, []byte("\n")) {
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) == 0 || len(trimmed) == len(line) {
			continue
		}
		if line[0] == '\t' {
			return "\t"
		}
		return string(line[:len(line)-len(trimmed)])
	}
	return "  "
}

// render indents compact JSON value for a member whose line starts with indent.
func render(value []byte, indent, unit string) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, value, indent, unit); err != nil {
		return value
	}
	return buf.Bytes()
}

func quote(s string) string {
	b, _ := marshal(s)
	return string(b)
}

// marshal is json.Marshal without HTML escaping (commands may hold & or <).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
