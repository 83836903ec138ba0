package upstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/safetext"
)

// ToolDefinition is one upstream tool's definition as clawd pins it
// (docs/upstreams.md, "Tool definitions need approval"). Canonical is the
// tool's pinned members as the upstream sent them, in canonical JSON;
// SHA256 is the hex digest of Canonical. Both are over the raw text, before
// anything is cleaned for display, so a change that only cleaning would
// hide (an added escape sequence, a tag character) is still a change.
type ToolDefinition struct {
	Tool      string // the upstream's own name, as it sent it
	SHA256    string
	Canonical []byte
	// Exposed is the name clients see for it (not part of the hash).
	Exposed string
}

// pinnedMembers are the members of a tool that make its definition: what
// the model reads (name, title, description, schemas) and what clients
// decide by (annotations: a flipped destructiveHint is a change). _meta
// and icons are not pinned.
var pinnedMembers = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// canonicalDefinition pins the tool object raw.
//
// The form is RFC 8785 (JSON Canonicalization Scheme): object members
// sorted by their UTF-16 code units, no insignificant whitespace, strings
// with the minimal escaping, numbers in their shortest ECMAScript form, so
// 1.0, 1e0 and 1 are one number and reordering members or re-indenting is
// no change. One deviation: integers keep all their digits
// (jsontext.CanonicalizeRawInts(false)), since JCS would round integers
// beyond 2^53 through a float64 and two different limits in a schema would
// hash alike. JCS was chosen because it is a published, implemented
// standard (anyone can recompute the hash with an RFC 8785 library) and the
// JSON library clawd already uses implements it.
func canonicalDefinition(raw jsontext.Value) (ToolDefinition, error) {
	var members map[string]jsontext.Value
	if err := jsonv2.Unmarshal(raw, &members); err != nil {
		return ToolDefinition{}, fmt.Errorf("the tool is not a JSON object: %w", err)
	}
	var name string
	if err := jsonv2.Unmarshal(members["name"], &name); err != nil {
		return ToolDefinition{}, fmt.Errorf("the tool's name is not a string")
	}
	var b bytes.Buffer
	enc := jsontext.NewEncoder(&b)
	enc.WriteToken(jsontext.BeginObject)
	for _, k := range pinnedMembers {
		v, ok := members[k]
		if !ok {
			continue
		}
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return ToolDefinition{}, err
		}
		if err := enc.WriteValue(v); err != nil {
			return ToolDefinition{}, fmt.Errorf("tool %q: %s: %w", safetext.Line(name), k, err)
		}
	}
	enc.WriteToken(jsontext.EndObject)
	v := jsontext.Value(bytes.TrimSpace(b.Bytes()))
	if err := v.Canonicalize(jsontext.CanonicalizeRawInts(false)); err != nil {
		return ToolDefinition{}, fmt.Errorf("tool %q: its definition cannot be put in canonical form: %w", safetext.Line(name), err)
	}
	sum := sha256.Sum256(v)
	return ToolDefinition{Tool: name, SHA256: hex.EncodeToString(sum[:]), Canonical: v}, nil
}

// proseKeys are the schema keywords whose string values are prose a model
// reads; only these are cleaned inside a schema. Other strings (enum and
// const values, patterns, property names) are what the model must send
// back exactly and are left as they are.
var proseKeys = map[string]bool{"description": true, "title": true, "$comment": true}

// hiddenOutsideProse reports whether v (a schema or annotations) has a
// string or member name outside the prose keys with a character
// safetext removes (terminal escapes, controls, invisible Unicode). Those
// strings are what the model must send back exactly, so clawd cannot clean
// them, and a reviewer would not see what they carry: such a tool is not
// offered (decodeToolsPage).
func hiddenOutsideProse(v jsontext.Value) bool {
	if len(v) == 0 {
		return false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	var names memberNames
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() != '"' {
			continue
		}
		if names.prose(dec, tok) {
			continue // a prose value: cleaned for display instead
		}
		if strings.IndexFunc(tok.String(), safetext.Forbidden) >= 0 {
			return true
		}
	}
}

// memberNames follows, for each open object of a decoder, whether the
// member it is at has a prose name, so a string value's name is known
// without building its path (dec.StackPointer walks the whole stack: over
// a schema nested thousands deep, with a string at every level, that made
// one scan quadratic).
type memberNames []bool

// prose reports whether tok, a string dec has just read, is the value of
// a prose key (proseKeys); a member name is recorded instead.
func (m *memberNames) prose(dec *jsontext.Decoder, tok jsontext.Token) bool {
	depth := dec.StackDepth()
	k, n := dec.StackIndex(depth)
	if k != '{' {
		return false
	}
	for len(*m) <= depth {
		*m = append(*m, false)
	}
	if n%2 == 1 {
		(*m)[depth] = proseKeys[tok.String()] // a name
		return false
	}
	return (*m)[depth]
}

// cleanSchema returns schema with every prose string cleaned
// (safetext.Clean); an unchanged schema is returned as it is, and one that
// cannot be read is returned as it is (it was checked when listed).
func cleanSchema(schema jsontext.Value) jsontext.Value {
	if len(schema) == 0 {
		return schema
	}
	dec := jsontext.NewDecoder(bytes.NewReader(schema))
	var b bytes.Buffer
	enc := jsontext.NewEncoder(&b)
	var names memberNames
	changed := false
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		if tok.Kind() == '"' {
			if names.prose(dec, tok) {
				s := tok.String()
				if c := safetext.Clean(s); c != s {
					tok, changed = jsontext.String(c), true
				}
			}
		}
		if err := enc.WriteToken(tok); err != nil {
			return schema
		}
	}
	if !changed {
		return schema
	}
	return jsontext.Value(bytes.TrimSpace(b.Bytes()))
}

// forDisplay returns t with every text the upstream wrote cleaned for
// people and models: title and description (safetext.Clean) and the prose
// in its schemas. The definition hash stays that of the raw text.
func (t upstreamTool) forDisplay() upstreamTool {
	t.Title = safetext.Clean(t.Title)
	t.Description = safetext.Clean(t.Description)
	t.InputSchema = cleanSchema(t.InputSchema)
	t.OutputSchema = cleanSchema(t.OutputSchema)
	return t
}
