package jsonrpc

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestParseMemberNames covers the rule that no object anywhere in a message
// may hold two names that are equal or differ only by case.
func TestParseMemberNames(t *testing.T) {
	call := func(params string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":` + params + `}`
	}
	var wide, wideOK strings.Builder
	wide.WriteString(`{"name":"x","arguments":{`)
	wideOK.WriteString(`{"name":"x","arguments":{`)
	for i := range 40 {
		fmt.Fprintf(&wide, `"m%d":%d,`, i, i)
		fmt.Fprintf(&wideOK, `"m%d":%d,`, i, i)
	}
	wide.WriteString(`"M17":1}}`)
	wideOK.WriteString(`"m40":1}}`)
	tests := []struct {
		name string
		in   string
		want []string // substrings of the -32600 message; nil: the message parses
	}{
		{"case variant of name in params", call(`{"name":"read_file","Name":"bash"}`), []string{`"name" and "Name"`, `in "/params"`, "differ only by case"}},
		{"case variant in arguments", call(`{"name":"read_file","arguments":{"path":"a","Path":"/etc/passwd"}}`), []string{`"path" and "Path"`, `in "/params/arguments"`}},
		{"upper case variant in arguments", call(`{"name":"read_file","arguments":{"PATH":"a","path":"b"}}`), []string{`"PATH" and "path"`}},
		{"case variant deep in arguments", call(`{"name":"x","arguments":{"a":[1,{"b":{"c":1,"C":2}}]}}`), []string{`"c" and "C"`, `in "/params/arguments/a/1/b"`}},
		{"case variant in _meta", call(`{"name":"x","_meta":{"progressToken":1,"progresstoken":2}}`), []string{`"progressToken" and "progresstoken"`, `in "/params/_meta"`}},
		{"case variant of params itself", `{"jsonrpc":"2.0","id":9,"method":"x","params":{},"Params":{}}`, []string{`"params" and "Params"`, "at the top level"}},
		{"exact duplicate in arguments", call(`{"name":"x","arguments":{"a":1,"a":2}}`), []string{`duplicate member name "a"`, `in "/params/arguments"`}},
		{"escaped duplicate", call(`{"name":"x","\u006eame":"y"}`), []string{`duplicate member name "name"`}},
		{"escaped case variant", call(`{"name":"x","\u004eame":"y"}`), []string{`"name" and "Name"`}},
		{"Kelvin sign folds to k", call(`{"name":"x","arguments":{"k":1,"\u212a":2}}`), []string{"differ only by case"}},
		{"long s folds to s", call(`{"name":"x","arguments":{"s":1,"ſ":2}}`), []string{"differ only by case"}},
		{"non-ASCII case variant", call(`{"name":"x","arguments":{"été":1,"ÉTÉ":2}}`), []string{`"été" and "ÉTÉ"`}},
		{"quote inside names", call(`{"name":"x","arguments":{"a\"b":1,"A\"B":2}}`), []string{`"a\"b" and "A\"B"`}},
		{"pointer escapes / and ~", call(`{"name":"x","arguments":{"a/b~c":{"q":1,"Q":2}}}`), []string{`"/params/arguments/a~1b~0c"`}},
		{"collision past the pairwise limit", call(wide.String()), []string{`"m17" and "M17"`}},
		{"collision after a string holding braces", call(`{"name":"x","arguments":{"a":"{\"A\":1,[","A":2}}`), []string{`"a" and "A"`}},
		{"collision after an escaped backslash", call(`{"name":"x","arguments":{"a":"\\","A":2}}`), []string{`"a" and "A"`}},

		{"same name in sibling objects", call(`{"name":"x","arguments":{"a":{"k":1},"b":{"k":1,"K2":0}}}`), nil},
		{"same name in array elements", call(`{"name":"x","arguments":{"l":[{"k":1},{"K":1}]}}`), nil},
		{"names in string values are not names", call(`{"name":"x","arguments":{"a":"x,\"A\":1","b":"\\\\"}}`), nil},
		{"underscore is not case", call(`{"name":"x","arguments":{"a_b":1,"ab":2,"a-b":3}}`), nil},
		{"wide object without collision", call(wideOK.String()), nil},
		{"empty names", call(`{"name":"x","arguments":{"":1,"a":{"":2}}}`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, perr := Parse([]byte(tt.in))
			if tt.want == nil {
				if perr != nil {
					t.Fatalf("Parse(%s): %d %s", tt.in, perr.Err.Code, perr.Err.Message)
				}
				return
			}
			if perr == nil {
				t.Fatalf("Parse(%s) succeeded, want -32600", tt.in)
			}
			if perr.Err.Code != CodeInvalidRequest {
				t.Errorf("code = %d, want %d", perr.Err.Code, CodeInvalidRequest)
			}
			if got := perr.ID.Raw(); got != "9" {
				t.Errorf("error id = %s, want 9 (the request's)", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(perr.Err.Message, w) {
					t.Errorf("message %q does not contain %q", perr.Err.Message, w)
				}
			}
		})
	}
}

// TestParseMemberNamesLinear guards the switch from pairwise comparison to
// a hash index: 200,000 distinct members in one object must parse in well
// under the time pairwise comparison would take (about 2e10 comparisons).
func TestParseMemberNamesLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{`)
	for i := range 200000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":0`, i)
	}
	b.WriteString(`,"K199999":1}}}`)
	done := make(chan *ParseError, 1)
	go func() { _, perr := Parse([]byte(b.String())); done <- perr }()
	select {
	case perr := <-done:
		if perr == nil || !strings.Contains(perr.Err.Message, `"k199999" and "K199999"`) {
			t.Fatalf("want the collision at the end reported, got %+v", perr)
		}
	case <-time.After(15 * time.Second):
		// About 0.3 s here on a loaded 2-core box; pairwise comparison takes minutes.
		t.Fatal("2.6 MB with 200,000 members in one object took over 15 s: the name check is not linear")
	}
}

// TestParseDuplicateIDAnswersFirst: with two ids the error carries the first.
func TestParseDuplicateIDAnswersFirst(t *testing.T) {
	_, perr := Parse([]byte(`{"jsonrpc":"2.0","id":"first","ID":"second","id":"third","method":"ping"}`))
	if perr == nil || perr.ID.Raw() != `"first"` {
		t.Fatalf("got %+v, want an error answered with id \"first\"", perr)
	}
}

// BenchmarkCheckNames is the member-name pass alone, on the messages of
// BenchmarkParse and BenchmarkParseLarge/write64KiB: its share of Parse.
func BenchmarkCheckNames(b *testing.B) {
	content := strings.Repeat(`line of text with a \"quote\" and \\ slash\n`, 64<<10/44)
	for _, c := range []struct{ name, line string }{
		{"call", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.rs"}}}`},
		{"write64KiB", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"` + content + `"}}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.line)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if e := CheckNames(line); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}
