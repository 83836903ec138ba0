package mcp

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
)

var callParamsSeeds = []string{
	``,
	`{}`,
	`{"name":"read_file","arguments":{"path":"a"}}`,
	`{"name":"x","arguments":null,"_meta":{"progressToken":1}}`,
	`{"name":null}`,
	`{"name":1}`,
	`{"name":"a\u0062"}`,
	`{"\u006eame":"x"}`,
	`{"Name":"x"}`,
	`{"NAME":"x","name":"y"}`,
	`{"name":"x","name":"y"}`,
	`{"other":{"a":1},"name":"x"}`,
	`{"arguments":[1]}`,
	`{"_META":{}}`,
	"{\"name\":\"\xff\"}",
	` { "name" : "x" } `,
	`null`,
	`[]`,
}

// TestDecodeCallParamsMatchesUnmarshal: whatever the plain-shape decoder
// accepts, json.Unmarshal reads alike.
func TestDecodeCallParamsMatchesUnmarshal(t *testing.T) {
	for _, in := range callParamsSeeds {
		checkCallParams(t, []byte(in))
	}
}

func FuzzDecodeCallParams(f *testing.F) {
	for _, in := range callParamsSeeds {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkCallParams(t, in) })
}

func checkCallParams(t *testing.T, in []byte) {
	t.Helper()
	var got, want callParams
	err := decodeCallParams(bytes.Clone(in), &got)
	werr := json.Unmarshal(orEmpty(bytes.Clone(in)), &want)
	if (err == nil) != (werr == nil) {
		t.Fatalf("decodeCallParams(%q): error %v, json.Unmarshal's %v", in, err, werr)
	}
	if err == nil && !reflect.DeepEqual(norm(got), norm(want)) {
		t.Fatalf("decodeCallParams(%q) = %+v, json.Unmarshal %+v", in, norm(got), norm(want))
	}
}

// norm compares values, not slice identities (nil and empty alike).
func norm(p callParams) [3]string {
	name := "<nil>"
	if p.Name != nil {
		name = *p.Name
	}
	return [3]string{name, string(p.Arguments), string(p.Meta)}
}
