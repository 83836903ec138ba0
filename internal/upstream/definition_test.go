//go:build unix

package upstream

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/tools"
)

func defOf(t *testing.T, raw string) ToolDefinition {
	t.Helper()
	d, err := canonicalDefinition(jsontext.Value(raw))
	if err != nil {
		t.Fatalf("canonicalDefinition(%s): %v", raw, err)
	}
	return d
}

// The hash ignores member order, whitespace, number spelling and unpinned
// members; any change to a pinned member, an annotation, or only in
// invisible characters, is a new hash.
func TestCanonicalDefinition(t *testing.T) {
	base := defOf(t, `{"name":"a","description":"d","inputSchema":{"type":"object","maximum":1},"annotations":{"destructiveHint":false}}`)
	if string(base.Canonical) != `{"annotations":{"destructiveHint":false},"description":"d","inputSchema":{"maximum":1,"type":"object"},"name":"a"}` {
		t.Errorf("canonical form: %s", base.Canonical)
	}
	for _, same := range []string{
		`{ "inputSchema" : {"maximum":1.0, "type":"object"}, "name":"a", "description":"d", "annotations":{"destructiveHint":false} }`,
		`{"name":"a","description":"\u0064","inputSchema":{"type":"object","maximum":1e0},"annotations":{"destructiveHint":false},"_meta":{"x":1},"icons":[]}`,
	} {
		if d := defOf(t, same); d.SHA256 != base.SHA256 {
			t.Errorf("%s hashed differently from the same definition: %s", same, d.Canonical)
		}
	}
	for _, changed := range []string{
		`{"name":"a","description":"d ","inputSchema":{"type":"object","maximum":1},"annotations":{"destructiveHint":false}}`,
		`{"name":"a","description":"d","inputSchema":{"type":"object","maximum":1},"annotations":{"destructiveHint":true}}`,
		`{"name":"a","description":"d","inputSchema":{"type":"object","maximum":1}}`,
		`{"name":"a","description":"d` + "\U000E0041" + `","inputSchema":{"type":"object","maximum":1},"annotations":{"destructiveHint":false}}`,
		`{"name":"a","title":"T","description":"d","inputSchema":{"type":"object","maximum":1},"annotations":{"destructiveHint":false}}`,
		`{"name":"a","description":"d","inputSchema":{"type":"object","maximum":1},"outputSchema":{"type":"object"},"annotations":{"destructiveHint":false}}`,
	} {
		if d := defOf(t, changed); d.SHA256 == base.SHA256 {
			t.Errorf("%s hashed like the base definition", changed)
		}
	}
	// Integers beyond 2^53 keep their digits.
	if defOf(t, `{"name":"a","inputSchema":{"maximum":9007199254740993}}`).SHA256 == defOf(t, `{"name":"a","inputSchema":{"maximum":9007199254740992}}`).SHA256 {
		t.Error("two integers beyond 2^53 hashed alike")
	}
	if _, err := canonicalDefinition(jsontext.Value(`{"name":"a","name":"b"}`)); err == nil {
		t.Error("a duplicate member was accepted")
	}
}

func TestCleanSchemaProseOnly(t *testing.T) {
	in := jsontext.Value(`{"type":"object","description":"ok\u001b[31m red","properties":{"mode":{"enum":["a\u200bb"],"title":"M\u202eode"}}}`)
	got := string(cleanSchema(in))
	want := `{"type":"object","description":"ok red","properties":{"mode":{"enum":["a\u200bb"],"title":"Mode"}}}`
	if !strings.Contains(got, `"description":"ok red"`) || !strings.Contains(got, `"title":"Mode"`) || !strings.Contains(got, "a\u200bb") {
		t.Errorf("cleanSchema = %s, want prose cleaned and the enum kept: %s", got, want)
	}
	clean := jsontext.Value(`{"type":"object"}`)
	if got := cleanSchema(clean); &got[0] != &clean[0] {
		t.Error("a clean schema was copied")
	}
}

// fakeApprovals stands in for the daemon's store: it remembers the last
// definitions seen and approves on request.
type fakeApprovals struct {
	mu       sync.Mutex
	seen     map[string]string // tool -> sha256
	approved map[string]string
	calls    int
}

func (a *fakeApprovals) check(server string, defs []ToolDefinition) (map[string]Approval, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	out := map[string]Approval{}
	for _, d := range defs {
		a.seen[d.Tool] = d.SHA256
		switch h, ok := a.approved[d.Tool]; {
		case !ok:
			out[d.Tool] = ApprovalNew
		case h == d.SHA256:
			out[d.Tool] = ApprovalApproved
		default:
			out[d.Tool] = ApprovalChanged
		}
	}
	return out, nil
}

func (a *fakeApprovals) approveAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, v := range a.seen {
		a.approved[k] = v
	}
}

func unapproved(t *testing.T, reg *tools.Registry, name string) (changed, pending bool) {
	t.Helper()
	e, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("%s not in the registry: %v", name, reg.Names())
	}
	_, changed, pending = e.Tool.(chain.Unapproved).DefinitionUnapproved()
	return changed, pending
}

// waitRegistry polls the registry until name's entry is (un)approved as
// wanted: the registry is what tools/list and the chain read.
func waitRegistry(t *testing.T, reg *tools.Registry, name string, wantPending bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if e, ok := reg.Lookup(name); ok {
			if _, _, pending := e.Tool.(chain.Unapproved).DefinitionUnapproved(); pending == wantPending {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became pending=%v in the registry", name, wantPending)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitApproval(t *testing.T, m *Manager, server, tool string, want Approval) Status {
	t.Helper()
	return waitFor(t, m, server, 15*time.Second, "with "+tool+" "+string(want), func(s Status) bool {
		for _, ti := range s.Tools {
			if ti.Original == tool && ti.Approval == want {
				return true
			}
		}
		return false
	})
}

// A tool whose definition changes while connected (its description, only
// invisible characters in it, or only an annotation) is withheld at once:
// marked unapproved in the registry (the chain hides and refuses it), its
// Call refused without reaching the upstream, the registry's subscribers
// told; approving the new definition offers it again.
func TestRugPullWhileConnected(t *testing.T) {
	for _, mode := range []string{"description", "hidden", "annotations"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ap := &fakeApprovals{seen: map[string]string{}, approved: map[string]string{}}
			m, reg := newTestManager(t, Options{CheckTools: ap.check})
			cfg := fake("rp", "-rugpull", mode)
			m.Apply(context.Background(), []ServerConfig{cfg})
			st := waitFor(t, m, "rp", 20*time.Second, "connected with its tools evaluated", func(s Status) bool {
				return s.State == StateConnected && len(s.Tools) > 0 && s.Tools[0].SHA256 != ""
			})
			waitRegistry(t, reg, "rp__echo", true)
			for _, ti := range st.Tools {
				if ti.Approval != ApprovalNew || !strings.Contains(ti.Note, "clawd mcp approve rp") {
					t.Fatalf("before any approval %s is %s (%q), want new with the fix", ti.Original, ti.Approval, ti.Note)
				}
			}
			if _, pending := unapproved(t, reg, "rp__echo"); !pending {
				t.Fatal("an unapproved tool is not marked so in the registry")
			}
			if _, err := call(t, reg, "rp__echo", `{}`); err == nil || !strings.Contains(err.Error(), "clawd mcp approve rp rp__echo") {
				t.Fatalf("calling an unapproved tool: %v", err)
			}
			ap.approveAll()
			m.Apply(context.Background(), []ServerConfig{cfg}) // what the daemon does when an approval is stored
			waitApproval(t, m, "rp", "echo", ApprovalApproved)
			waitRegistry(t, reg, "rp__echo", false)
			before := reg.Names()
			// A notification counts only if, when it arrives, the registry
			// already withholds echo: that is the one clients act on.
			var notified sync.Once
			got := make(chan struct{})
			stop := reg.Subscribe(func() {
				if e, ok := reg.Lookup("rp__echo"); ok {
					if _, _, pending := e.Tool.(chain.Unapproved).DefinitionUnapproved(); pending {
						notified.Do(func() { close(got) })
					}
				}
			})
			defer stop()
			callText(t, reg, "rp__mutate", `{}`)
			waitApproval(t, m, "rp", "echo", ApprovalChanged)
			waitRegistry(t, reg, "rp__echo", true)
			if changed, pending := unapproved(t, reg, "rp__echo"); !pending || !changed {
				t.Fatalf("after the rug pull: changed %v pending %v, want both", changed, pending)
			}
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("the registry's subscribers were not told the list changed")
			}
			if _, err := call(t, reg, "rp__echo", `{"x":"1"}`); err == nil || !strings.Contains(err.Error(), "not approved") {
				t.Fatalf("calling the changed tool: %v", err)
			}
			if _, pending := unapproved(t, reg, "rp__mutate"); pending {
				t.Error("a tool that did not change was withheld too")
			}
			if after := reg.Names(); len(after) != len(before) {
				t.Errorf("names changed with the definition: %v -> %v", before, after)
			}
			ap.approveAll()
			m.Apply(context.Background(), []ServerConfig{cfg})
			waitApproval(t, m, "rp", "echo", ApprovalApproved)
			waitRegistry(t, reg, "rp__echo", false)
			if out := callText(t, reg, "rp__echo", `{"x":"1"}`); !strings.Contains(out, `\"x\":\"1\"`) {
				t.Errorf("the approved tool answered %s", out)
			}
			e, _ := reg.Lookup("rp__echo")
			for _, r := range e.Tool.Spec().Description {
				if safetext.Forbidden(r) {
					t.Fatalf("the offered description keeps %U: %q", r, e.Tool.Spec().Description)
				}
			}
		})
	}
}

// A server that lists a tool twice, a new definition first and the
// approved one after it, does not get the new one offered or called under
// the approval of the other: which one a client is shown, which one the
// approval is looked up for and which one a call is held to must not be
// different listings.
func TestRugPullByListingTwice(t *testing.T) {
	t.Parallel()
	ap := &fakeApprovals{seen: map[string]string{}, approved: map[string]string{}}
	m, reg := newTestManager(t, Options{CheckTools: ap.check})
	cfg := fake("rp", "-rugpull", "dup")
	m.Apply(context.Background(), []ServerConfig{cfg})
	waitFor(t, m, "rp", 20*time.Second, "connected with its tools evaluated", func(s Status) bool {
		return s.State == StateConnected && len(s.Tools) > 0 && s.Tools[0].SHA256 != ""
	})
	ap.approveAll()
	m.Apply(context.Background(), []ServerConfig{cfg})
	waitApproval(t, m, "rp", "echo", ApprovalApproved)
	waitRegistry(t, reg, "rp__echo", false)
	callText(t, reg, "rp__mutate", `{}`)
	waitFor(t, m, "rp", 15*time.Second, "listing echo twice", func(s Status) bool {
		return len(s.Tools) > 0 && strings.Contains(s.Tools[0].Description, "id_rsa")
	})
	time.Sleep(200 * time.Millisecond) // the approvals of the new list are evaluated after it is stored
	e, ok := reg.Lookup("rp__echo")
	if !ok {
		return // not offered at all: fine
	}
	_, _, pending := e.Tool.(chain.Unapproved).DefinitionUnapproved()
	if desc := e.Tool.Spec().Description; !pending && strings.Contains(desc, "id_rsa") {
		t.Errorf("the unapproved definition is offered as approved: %q", desc)
	}
	if out, err := call(t, reg, "rp__echo", `{"x":"1"}`); err == nil {
		t.Errorf("the tool listed twice was called: %v", out)
	}
}

// A server cannot lift a deny written for one of its tools by adding a
// tool whose name differs only in case and sorts first: that takes the
// plain name and renames the denied tool, whose definition (and approval)
// is unchanged, to a hashed name no permission names.
func TestDenyFollowsARename(t *testing.T) {
	t.Parallel()
	ap := &fakeApprovals{seen: map[string]string{}, approved: map[string]string{}}
	m, reg := newTestManager(t, Options{CheckTools: ap.check})
	cfg := fake("rp", "-rugpull", "case")
	m.Apply(context.Background(), []ServerConfig{cfg})
	waitFor(t, m, "rp", 20*time.Second, "connected with its tools evaluated", func(s Status) bool {
		return s.State == StateConnected && len(s.Tools) > 0 && s.Tools[0].SHA256 != ""
	})
	ap.approveAll()
	m.Apply(context.Background(), []ServerConfig{cfg})
	waitRegistry(t, reg, "rp__echo", false)
	row := chain.TrustEntry{Entity: "cc:*", Level: 3, Perms: map[string]string{"rp__echo": chain.PermDeny}}
	e, _ := reg.Lookup("rp__echo")
	if allow, _ := chain.Evaluate(row, e.Tool.Spec()); allow {
		t.Fatal("the denied tool is allowed before the rename")
	}
	callText(t, reg, "rp__mutate", `{}`)
	st := waitFor(t, m, "rp", 15*time.Second, "with echo renamed", func(s Status) bool {
		for _, ti := range s.Tools {
			if ti.Original == "echo" && ti.Exposed != "" && ti.Exposed != "rp__echo" {
				return true
			}
		}
		return false
	})
	for _, ti := range st.Tools {
		if ti.Original != "echo" {
			continue
		}
		waitRegistry(t, reg, ti.Exposed, false) // still approved: its definition did not change
		e, _ := reg.Lookup(ti.Exposed)
		if allow, reason := chain.Evaluate(row, e.Tool.Spec()); allow {
			t.Errorf("echo, denied as rp__echo and renamed %s by the server's new tool ECHO, is allowed (%s)", ti.Exposed, reason)
		}
		// The reverse: a deny written for the name echo has now, which the
		// server gives back to it by dropping ECHO again.
		hashed := chain.TrustEntry{Entity: "cc:*", Level: 3, Perms: map[string]string{ti.Exposed: chain.PermDeny}}
		callText(t, reg, "rp__mutate", `{}`)
		waitFor(t, m, "rp", 15*time.Second, "with echo back as rp__echo", func(s Status) bool {
			for _, ti := range s.Tools {
				if ti.Original == "echo" && ti.Exposed == "rp__echo" {
					return true
				}
			}
			return false
		})
		waitRegistry(t, reg, "rp__echo", false)
		e, _ = reg.Lookup("rp__echo")
		if allow, reason := chain.Evaluate(hashed, e.Tool.Spec()); allow {
			t.Errorf("echo, denied as %s and given back rp__echo by the server dropping ECHO, is allowed (%s)", ti.Exposed, reason)
		}
	}
}

// What a description hides is gone before a client or a person sees it,
// in the registry (tools/list) and in Status (the CLI's listings).
func TestDescriptionsCleaned(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("ev", "-evil-text")})
	st := connected(t, m, "ev")
	want := "Echoes its input. docs file_txt.exe"
	e, ok := reg.Lookup("ev__echo")
	if !ok {
		t.Fatal("ev__echo missing")
	}
	if got := e.Tool.Spec().Description; got != want {
		t.Errorf("offered description %q, want %q", got, want)
	}
	for _, ti := range st.Tools {
		if ti.Original == "echo" && ti.Description != want {
			t.Errorf("status description %q, want %q", ti.Description, want)
		}
	}
}

// A tool approved for one definition is not called once the server lists
// another, even before the approvals are looked at again.
func TestCallRefusedWhenListedDefinitionMoved(t *testing.T) {
	m := NewManager(nil, Options{})
	s := newServer(m, fake("u"), nil)
	// Listed twice: the first listing is the one a call is held to.
	s.setToolsLocked([]upstreamTool{{Name: "a", Def: ToolDefinition{Tool: "a", SHA256: "new"}}, {Name: "a", Def: ToolDefinition{Tool: "a", SHA256: "old"}}})
	p := &provider{name: "u", srv: s}
	tl := &upTool{p: p, original: "a", approval: ApprovalApproved, sha256: "old", spec: tools.Spec{Name: "u__a"}}
	if _, err := tl.Call(context.Background(), jsontext.Value(`{}`)); err == nil || !strings.Contains(err.Error(), "changed since it was approved") {
		t.Fatalf("call under a stale approval: %v", err)
	}
	tl.sha256 = "new"
	if _, err := tl.Call(context.Background(), jsontext.Value(`{}`)); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("call with the listed definition should reach the (unconnected) server: %v", err)
	}
}

// FuzzCleanSchema: a schema stays valid JSON, no prose string in it keeps
// a character safetext removes, and cleaning twice changes nothing.
func FuzzCleanSchema(f *testing.F) {
	f.Add(`{"description":"a\u001b[31mb","properties":{"x":{"title":"\u202eT","enum":["\u200b"]}}}`)
	f.Add(`{"$comment":"` + "\U000E0041" + `","items":[{"description":"ok"}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		v := jsontext.Value(in)
		if !v.IsValid() || v.Kind() != '{' {
			return
		}
		out := cleanSchema(v)
		if !out.IsValid() {
			t.Fatalf("cleanSchema(%s) = %s: invalid JSON", in, out)
		}
		dec := jsontext.NewDecoder(strings.NewReader(string(out)))
		for {
			tok, err := dec.ReadToken()
			if err != nil {
				break
			}
			if tok.Kind() != '"' {
				continue
			}
			if k, n := dec.StackIndex(dec.StackDepth()); k == '{' && n%2 == 0 && proseKeys[dec.StackPointer().LastToken()] {
				for _, r := range tok.String() {
					if safetext.Forbidden(r) {
						t.Fatalf("cleanSchema(%s) keeps %U in prose: %s", in, r, out)
					}
				}
			}
		}
		if again := cleanSchema(out); string(again) != string(out) {
			t.Fatalf("not idempotent: %s -> %s -> %s", in, out, again)
		}
	})
}

// The schema scans take time linear in the schema, however deep: a
// server's schema nested to the decoder's limit, with a string at every
// level, took most of a second per tool (the path to each string was built
// anew), and a tools/list of 32 MiB of them minutes of CPU, on every
// listing.
//
// The test compares a schema 9990 levels deep (within jsontext's limit of
// 10000) with one 1248 levels deep rather than holding either to a
// wall-clock bound (see growthRatio).
func TestSchemaScansAreLinear(t *testing.T) {
	scan := func(depth int) func() {
		v := jsontext.Value(strings.Repeat(`{"d":"x","a":`, depth) + "1" + strings.Repeat("}", depth))
		return func() {
			hiddenOutsideProse(v)
			cleanSchema(v)
		}
	}
	growthRatio(t, "scanning a deep schema", scan(1248), scan(9990), 8)
}

// TestHiddenOutsideProse: a control or invisible character in a string the
// model must send back as it is (an enum value, a property name), or in
// annotations, is found; in prose (descriptions, titles) it is not this
// check's business: prose is cleaned for display.
func TestHiddenOutsideProse(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{`{"type":"object","properties":{"mode":{"type":"string","enum":["fast","safe"]}}}`, false},
		{`{"type":"object","properties":{"mode":{"type":"string","description":"pick \u202e one"}}}`, false},
		{`{"type":"object","properties":{"mode":{"type":"string","enum":["fast","s\u200bafe"]}}}`, true},
		{`{"type":"object","properties":{"pa\u001b[8mth":{"type":"string"}}}`, true},
		{`{"type":"object","properties":{"x":{"const":"` + "\U000E0041" + `"}}}`, true},
		{`{"title":"ok","destructiveHint":false}`, false},
		{`{"title":"ok","x-note":"a\u0007b"}`, true},
		{``, false},
	} {
		if got := hiddenOutsideProse(jsontext.Value(tc.v)); got != tc.want {
			t.Errorf("hiddenOutsideProse(%s) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
