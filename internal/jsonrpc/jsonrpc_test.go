package jsonrpc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/cputime"
	"github.com/clawde/clawd/internal/support/race"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantCode   int    // 0: parses
		wantID     string // the id to answer with ("null" when unreadable)
		wantMethod string
		notify     bool
		response   bool
	}{
		{name: "request", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, wantID: "1", wantMethod: "ping"},
		{name: "string id", in: `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, wantID: `"a-1"`, wantMethod: "ping"},
		{name: "30-digit id echoed exactly", in: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, wantID: "123456789012345678901234567890", wantMethod: "ping"},
		{name: "negative id", in: `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, wantID: "-7", wantMethod: "ping"},
		{name: "minus zero is an integer", in: `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, wantID: "-0", wantMethod: "ping"},
		{name: "400-digit id echoed exactly", in: `{"jsonrpc":"2.0","id":` + strings.Repeat("9", 400) + `,"method":"ping"}`, wantID: strings.Repeat("9", 400), wantMethod: "ping"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantID: "null", wantMethod: "notifications/initialized", notify: true},
		{name: "params object", in: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, wantID: "1", wantMethod: "tools/call"},
		{name: "member order free", in: `{"method":"ping","id":2,"jsonrpc":"2.0"}`, wantID: "2", wantMethod: "ping"},
		{name: "whitespace around", in: " \t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} ", wantID: "1", wantMethod: "ping"},
		{name: "unknown member ignored", in: `{"jsonrpc":"2.0","id":1,"method":"ping","extra":true}`, wantID: "1", wantMethod: "ping"},
		{name: "response from peer", in: `{"jsonrpc":"2.0","id":1,"result":{}}`, wantID: "1", response: true},
		{name: "error response from peer", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, wantID: "1", response: true},

		{name: "invalid JSON", in: `{"jsonrpc":"2.0",`, wantCode: CodeParseError, wantID: "null"},
		{name: "not JSON at all", in: `hello`, wantCode: CodeParseError, wantID: "null"},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, wantCode: CodeParseError, wantID: "null"},
		{name: "two objects", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`, wantCode: CodeParseError, wantID: "null"},
		{name: "invalid UTF-8", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", wantCode: CodeParseError, wantID: "null"},
		{name: "empty", in: ``, wantCode: CodeParseError, wantID: "null"},
		{name: "array is not a message", in: `[1]`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "scalar", in: `42`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "wrong version", in: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "version as number", in: `{"jsonrpc":2.0,"id":1,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "missing version", in: `{"id":1,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "null id", in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "array id", in: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "bool id", in: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "fractional id", in: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "fraction of zero", in: `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "minus zero fraction", in: `{"jsonrpc":"2.0","id":-0.0,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "exponent id", in: `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "huge exponent id", in: `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "capital exponent id", in: `{"jsonrpc":"2.0","id":1E400,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "fractional id in a response", in: `{"jsonrpc":"2.0","id":2.5,"result":{}}`, wantCode: CodeInvalidRequest, wantID: "null"},
		{name: "missing method", in: `{"jsonrpc":"2.0","id":1}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "empty method", in: `{"jsonrpc":"2.0","id":1,"method":""}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "method not a string", in: `{"jsonrpc":"2.0","id":1,"method":7}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "params array", in: `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "params string", in: `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "duplicate id", in: `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "duplicate method", in: `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "duplicate inside params", in: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","name":"bash"}}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "duplicate deep inside arguments", in: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":{"b":1,"b":2}}}}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "case variant of method", in: `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "case variant of id", in: `{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "case variant alone", in: `{"jsonrpc":"2.0","id":1,"METHOD":"ping"}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, wantCode: CodeInvalidRequest, wantID: "1"},
		{name: "result and method", in: `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, wantCode: CodeInvalidRequest, wantID: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, perr := Parse([]byte(tt.in))
			if tt.wantCode != 0 {
				if perr == nil {
					t.Fatalf("Parse(%s) succeeded, want error %d", tt.in, tt.wantCode)
				}
				if perr.Err.Code != tt.wantCode {
					t.Errorf("code = %d (%s), want %d", perr.Err.Code, perr.Err.Message, tt.wantCode)
				}
				if got := perr.ID.Raw(); got != tt.wantID {
					t.Errorf("error id = %s, want %s", got, tt.wantID)
				}
				if perr.Err.Message == "" {
					t.Error("error has no message")
				}
				return
			}
			if perr != nil {
				t.Fatalf("Parse(%s): %d %s", tt.in, perr.Err.Code, perr.Err.Message)
			}
			if got := m.ID.Raw(); got != tt.wantID {
				t.Errorf("id = %s, want %s", got, tt.wantID)
			}
			if m.Method != tt.wantMethod {
				t.Errorf("method = %q, want %q", m.Method, tt.wantMethod)
			}
			if m.IsNotification() != tt.notify {
				t.Errorf("IsNotification = %v, want %v", m.IsNotification(), tt.notify)
			}
			if m.IsResponse != tt.response {
				t.Errorf("IsResponse = %v, want %v", m.IsResponse, tt.response)
			}
		})
	}
}

func TestParseKeepsParamsExactly(t *testing.T) {
	m, perr := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a": [1, 2.50, "\u00e9"]}}`))
	if perr != nil {
		t.Fatal(perr.Err)
	}
	if got, want := string(m.Params), `{"a": [1, 2.50, "\u00e9"]}`; got != want {
		t.Errorf("params = %s, want %s", got, want)
	}
}

func TestKeyOf(t *testing.T) {
	same := [][2]string{
		{`42`, `42`},
		{`1e2`, `100`},
		{`100.0`, `100`},
		{`"a"`, `"\u0061"`},
		{`-0`, `0`},
		{`-0.0e5`, `0`},
		{`-42.0`, `-42`},
		{`4.2e1`, `42`},
		{`4200E-2`, `42`},
		{`0.00120e4`, `12`},
		{`1.2300e+30`, `1230000000000000000000000000000`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
	}
	for _, p := range same {
		if KeyOf([]byte(p[0])) != KeyOf([]byte(p[1])) {
			t.Errorf("KeyOf(%s) != KeyOf(%s)", p[0], p[1])
		}
	}
	differ := [][2]string{
		{`42`, `"42"`},
		{`1`, `2`},
		{`123456789012345678901234567890`, `123456789012345678901234567891`},
		{`"a"`, `"A"`},
		{`-42`, `42`},
	}
	for _, p := range differ {
		if KeyOf([]byte(p[0])) == KeyOf([]byte(p[1])) {
			t.Errorf("KeyOf(%s) == KeyOf(%s), want different", p[0], p[1])
		}
	}
}

// TestKeyOfBoundedCost: a cancel's requestId is any JSON number the
// client likes; its key must cost time and memory in proportion to its
// text, not to the value it denotes (1e999999 is a million digits; a
// 4 MB mantissa took big.Rat 24 s).
func TestKeyOfBoundedCost(t *testing.T) {
	for _, raw := range []string{
		"1e999999",
		"-9.9e999999",
		"1" + strings.Repeat("7", 1<<20) + "e0",
		"1." + strings.Repeat("0", 1<<20),
		"1e" + strings.Repeat("9", 1<<10),
	} {
		// The CPU time, not the wall time, is bounded: a loaded machine
		// stretches the one, not the other. The wall time is bounded only
		// against a hang.
		start, cpu := time.Now(), cputime.Process()
		k := KeyOf([]byte(raw))
		if used, took := cputime.Process()-cpu, time.Since(start); used > 50*time.Millisecond*race.Slowdown || took > 5*time.Second*race.Slowdown {
			t.Errorf("KeyOf(%.20s...) took %v (%v of CPU)", raw, took, used)
		}
		if len(k) > len(raw)+2048 {
			t.Errorf("KeyOf(%.20s...) is %d bytes long, for %d of text", raw, len(k), len(raw))
		}
	}
}

func TestEncode(t *testing.T) {
	id := IDFromRaw([]byte("123456789012345678901234567890"))
	if got, want := string(AppendResult(nil, id, []byte(`{}`))), `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}`; got != want {
		t.Errorf("AppendResult = %s, want %s", got, want)
	}
	e := &Error{Code: -32005, Message: "sandbox_violation", Data: map[string]any{"path": "../x"}}
	if got, want := string(AppendError(nil, ID{}, e)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"sandbox_violation","data":{"path":"../x"}}}`; got != want {
		t.Errorf("AppendError = %s, want %s", got, want)
	}
	// Data that cannot be marshalled is dropped, never producing bad JSON.
	bad := &Error{Code: 1, Message: "m", Data: func() {}}
	if got := string(AppendError(nil, ID{}, bad)); !strings.Contains(got, `"message":"m"`) || strings.Contains(got, "data") {
		t.Errorf("AppendError with bad data = %s", got)
	}
	n, err := AppendNotification(nil, "notifications/tools/list_changed", nil)
	if err != nil || string(n) != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("AppendNotification = %s, %v", n, err)
	}
}

func TestIsBatch(t *testing.T) {
	for in, want := range map[string]bool{`[{}]`: true, "  \n[": true, `{}`: false, ``: false, ` `: false} {
		if got := IsBatch([]byte(in)); got != want {
			t.Errorf("IsBatch(%q) = %v, want %v", in, got, want)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.rs"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, perr := Parse(line); perr != nil {
			b.Fatal(perr.Err)
		}
	}
}

// BenchmarkParseLarge parses a write_file call carrying 64 KiB of content
// and one with a wide, nested arguments object: the member-name checks must
// stay linear in the message size.
func BenchmarkParseLarge(b *testing.B) {
	content := strings.Repeat(`line of text with a \"quote\" and \\ slash\n`, 64<<10/44)
	var wide strings.Builder
	wide.WriteString(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{`)
	for i := range 2000 {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"member_%d":{"a":[1,2,{"b":"c"}],"Key%d":true}`, i, i)
	}
	wide.WriteString(`}}}`)
	for _, c := range []struct{ name, line string }{
		{"write64KiB", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"` + content + `"}}}`},
		{"wide2000", wide.String()},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.line)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, perr := Parse(line); perr != nil {
					b.Fatal(perr.Err)
				}
			}
		})
	}
}

// A member of a batch holding a name twice is refused as the same member
// alone is: -32600 naming the name, for that member, and the batch's other
// members are parsed. (The batch's validity check rejected duplicate names
// itself, so the whole batch got -32700 "not valid JSON", while a
// case-variant pair got -32600 per member.) Invalid UTF-8 stays -32700.
func TestParseBatchDuplicateNames(t *testing.T) {
	m, perr := ParseAny([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping","id":2},{"jsonrpc":"2.0","id":3,"method":"ping"}]`))
	if perr != nil || m.Batch == nil || m.Batch.Err != nil || len(m.Batch.Items) != 2 {
		t.Fatalf("ParseAny: %v %+v", perr, m.Batch)
	}
	if e := m.Batch.Items[0].Err; e == nil || e.Err.Code != CodeInvalidRequest || !strings.Contains(e.Err.Message, `duplicate member name "id"`) || e.ID.Raw() != "1" {
		t.Errorf("member with a duplicate name: %+v", e)
	}
	if e := m.Batch.Items[1].Err; e != nil || m.Batch.Items[1].Msg.ID.Raw() != "3" {
		t.Errorf("valid member: %+v", e)
	}
	m, _ = ParseAny([]byte("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}]"))
	if m.Batch == nil || m.Batch.Err == nil || m.Batch.Err.Code != CodeParseError {
		t.Errorf("batch with invalid UTF-8: %+v", m.Batch)
	}
}
