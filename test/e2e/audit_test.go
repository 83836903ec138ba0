package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

type auditRow struct {
	ID            int64   `json:"id"`
	Timestamp     string  `json:"timestamp"`
	ToolID        string  `json:"tool_id"`
	Reason        string  `json:"reason"`
	Outcome       *string `json:"outcome"`
	OutcomeDetail *string `json:"outcome_detail"`
	ArgsSHA256    *string `json:"args_sha256"`
	ArgsSummary   *string `json:"args_summary"`
}

func (e *env) audit(args ...string) []auditRow {
	e.T.Helper()
	out, stderr, code := e.Run(append([]string{"audit", "--json"}, args...)...)
	if code != 0 {
		e.T.Fatalf("audit %v: exit %d %s", args, code, stderr)
	}
	var rows []auditRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		e.T.Fatalf("audit --json: %v\n%s", err, out)
	}
	return rows
}

// A bash call whose command holds secrets of formats too short or too
// regular to look random (a GitLab token, an AWS key id, a vault token, a
// SQL Server password) is stored with them masked.
func TestAuditSummaryMasksSecretFormats(t *testing.T) {
	e := newEnv(t)
	r := e.Stdio()
	r.Initialize("claude-code")
	secrets := []string{"x2Fq9ZbK7vR3mN8pW1tY", "IOSFODNN7EXAMPLE", "Zx7nQ4wLp9RbT2vK8mJc3Yd1", "Tr0ub4dor3x"}
	r.CallTool("bash", map[string]any{"command": "true glpat-x2Fq9ZbK7vR3mN8pW1tY AKIAIOSFODNN7EXAMPLE; true vault login s.Zx7nQ4wLp9RbT2vK8mJc3Yd1; true sqlcmd -P Tr0ub4dor3x"})
	r.CloseWait()

	rows := e.audit("--limit", "0")
	if len(rows) != 1 || rows[0].ArgsSummary == nil {
		t.Fatalf("rows %+v, want one with a summary", rows)
	}
	s := *rows[0].ArgsSummary
	if !strings.HasPrefix(s, "command: true *** ***; true vault login ***; true sqlcmd -P ***") {
		t.Errorf("bash summary %q", s)
	}
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			t.Errorf("bash summary %q shows %q", s, secret)
		}
	}
}

// The audit log says what each call was about (a masked summary and a
// digest), that a timed-out bash call timed out, labels once, local times
// by default, and --since, --follow and prune do what they say.
func TestAuditSummaryOutcomeAndTimes(t *testing.T) {
	e := newEnv(t)
	e.Write("a.txt", "A\n")
	r := e.Stdio()
	r.Initialize("claude-code")
	r.CallTool("read_file", map[string]any{"path": "a.txt"})
	r.CallTool("read_file", map[string]any{"path": "missing.txt"})
	r.CallTool("bash", map[string]any{"command": "TOKEN=s3cr3t-value sleep 5\necho second line", "timeout_ms": 200})
	r.CloseWait() // the session ends; clawd commits the outcomes on its way out

	rows := e.audit("--limit", "0")
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3: %+v", len(rows), rows)
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	if s := str(rows[0].ArgsSummary); s != "path: a.txt" || len(str(rows[0].ArgsSHA256)) != 64 {
		t.Errorf("read_file row: summary %q, digest %q", s, str(rows[0].ArgsSHA256))
	}
	if o := str(rows[1].Outcome); o != "tool_error" || (rows[1].OutcomeDetail != nil && *rows[1].OutcomeDetail == "tool_error") {
		t.Errorf("failed read_file: outcome %q detail %q", o, str(rows[1].OutcomeDetail))
	}
	bash := rows[2]
	if o := str(bash.Outcome); o != "timeout" {
		t.Errorf("timed-out bash: outcome %q, want timeout", o)
	}
	if s := str(bash.ArgsSummary); !strings.Contains(s, "command: TOKEN=*** sleep 5 …") || strings.Contains(s, "s3cr3t") || strings.Contains(s, "second line") {
		t.Errorf("bash summary %q", s)
	}

	// Text: local time by default (TZ is Tokyo, nine hours ahead of UTC),
	// --utc on request; no doubled labels.
	text := func(args ...string) string {
		cmd := e.Command(append([]string{"audit"}, args...)...)
		cmd.Env = append(cmd.Env, "TZ=Asia/Tokyo")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("audit %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	ts, _ := time.Parse("2006-01-02T15:04:05.000Z", rows[0].Timestamp)
	local, utc := text(), text("--utc")
	if !strings.Contains(local, "TIME (local)") || !strings.Contains(local, ts.Add(9*time.Hour).Format("2006-01-02 15:04:05.000")) {
		t.Errorf("local times:\n%s", local)
	}
	if !strings.Contains(utc, "TIME (UTC)") || !strings.Contains(utc, ts.Format("2006-01-02 15:04:05.000")) {
		t.Errorf("--utc times:\n%s", utc)
	}
	if strings.Contains(local, "tool_error (tool_error)") || !strings.Contains(local, "timeout") || !strings.Contains(local, "path: a.txt") {
		t.Errorf("audit text:\n%s", local)
	}

	// --since: a duration and a time.
	if n := len(e.audit("--since", "1h")); n != 3 {
		t.Errorf("--since 1h: %d rows, want 3", n)
	}
	if n := len(e.audit("--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))); n != 0 {
		t.Errorf("--since in an hour: %d rows, want 0", n)
	}
	if _, stderr, code := e.Run("audit", "--since", "yesterday-ish"); code != 2 || !strings.Contains(stderr, "use a duration") {
		t.Errorf("bad --since: exit %d %q", code, stderr)
	}

	// --follow prints rows written after it started.
	follow := e.Command("audit", "--follow", "--json")
	var out clawdtest.SyncBuffer // polled below while follow writes it
	follow.Stdout = &out
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	r2 := e.Stdio()
	r2.Initialize("claude-code")
	r2.CallTool("list_dir", map[string]any{"path": "."})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"args_summary":"path: ."`) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	follow.Process.Kill()
	follow.Wait()
	if !strings.Contains(out.String(), `"args_summary":"path: ."`) {
		t.Errorf("--follow did not print the new row:\n%s", out.String())
	}

	// prune: nothing is older than an hour; everything is older than a
	// time in the future.
	if out, _, code := e.Run("audit", "prune", "--older-than", "1h"); code != 0 || !strings.Contains(out, "deleted 0 audit rows") {
		t.Errorf("prune 1h: exit %d %q", code, out)
	}
	if _, stderr, code := e.Run("audit", "prune"); code != 2 || !strings.Contains(stderr, "--older-than") {
		t.Errorf("prune without --older-than: exit %d %q", code, stderr)
	}
	out2, _, code := e.Run("audit", "prune", "--older-than", time.Now().Add(time.Minute).Format("2006-01-02T15:04:05"))
	// The newest row stays, so row ids are never given twice: here the
	// first prune's own row. The calls' four rows go.
	if code != 0 || !strings.Contains(out2, "deleted 4 audit rows") {
		t.Errorf("prune everything: exit %d %q", code, out2)
	}
	// Each prune is on record: the newest row (the first prune's) and the
	// second prune's, which says how many went.
	rows = e.audit("--limit", "0")
	if len(rows) != 2 || rows[0].ToolID != "audit:prune" || rows[1].ToolID != "audit:prune" ||
		!strings.HasPrefix(rows[1].Reason, "prune: deleted 4 rows written before ") {
		t.Errorf("rows after pruning everything: %+v, want the newest and the prune's own", rows)
	}
}
