package upstream

import (
	"bytes"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// refusedEnvelopes are messages scanEnvelope must leave to the SDK's
// decoder.
var refusedEnvelopes = []string{
	`{"id":"clawd-call-1","id":"clawd-call-2","result":{}}`,
	`{"i\u0064":"clawd-call-1","result":{}}`,
	`{"id":"clawd-call-1","result":[}`,
	`{"id":"clawd-call-1","result":{"a":[1,2}]}}`,
	`{"id":"clawd-call-1","result":{}} x`,
	`{"id":"clawd-call-1","result":{},}`,
	`["id"]`,
	`{"id":"clawd-call-1" "result":{}}`,
	`{"id":"clawd-call-1","result":"unterminated}`,
	`{"id":,"result":{}}`,
	``,
}

var envelopeSeeds = append([]string{
	`{"jsonrpc":"2.0","id":"clawd-call-1","result":{"content":[{"type":"text","text":"a\"}]"}]}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	` { "id" : "clawd-call-2" , "result" : [ 1 , { } ] } `,
	`{}`,
	`{"id":null,"result":true}`,
	`{"id":"\u0063lawd-call-3","result":{}}`,
}, refusedEnvelopes...)

// Whatever scanEnvelope accepts, a full JSON decoder reads alike: for a
// valid message every member it returns is exactly the decoder's, and a
// valid message with plain member names is never turned away. (It may
// accept a message whose values are invalid; their consumers check them.)
func FuzzScanEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env, ok := scanEnvelope(b)
		var m struct {
			ID     jsontext.Value `json:"id"`
			Method jsontext.Value `json:"method"`
			Params jsontext.Value `json:"params"`
			Result jsontext.Value `json:"result"`
			Error  jsontext.Value `json:"error"`
		}
		err := jsonv2.Unmarshal(b, &m)
		if err != nil {
			return // invalid JSON: nothing to compare with
		}
		if !ok {
			if !bytes.Contains(b, []byte(`\`)) && jsontext.Value(b).Kind() == '{' {
				t.Fatalf("a valid object with plain names was turned away: %q", b)
			}
			return
		}
		for _, p := range []struct {
			name      string
			got, want []byte
		}{{"id", env.id, m.ID}, {"method", env.method, m.Method}, {"params", env.params, m.Params},
			{"result", env.result, m.Result}, {"error", env.err, m.Error}} {
			if !bytes.Equal(p.got, p.want) {
				t.Fatalf("%s of %q: got %q, the decoder %q", p.name, b, p.got, p.want)
			}
		}
	})
}

func TestScanEnvelopeRefuses(t *testing.T) {
	for _, s := range refusedEnvelopes {
		if env, ok := scanEnvelope([]byte(s)); ok {
			t.Errorf("accepted %q: %+v", s, env)
		}
	}
	if id, ok := directID([]byte(`"\u0063lawd-call-3"`)); !ok || id != "clawd-call-3" {
		t.Errorf("escaped direct id: %q %v", id, ok)
	}
	for _, raw := range []string{`"clawd-call-"`, `"other-1"`, `7`, `null`, `"clawd-call-1\"`} {
		if id, ok := directID([]byte(raw)); ok {
			t.Errorf("directID(%s) = %q", raw, id)
		}
	}
}
