package chain

import (
	"context"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/tools"
)

// upstreamProvider is a built-in-origin provider standing for upstream
// servers: the supply-chain step passes, so only policy decides.
var upstreamProvider = &tools.StaticProvider{Name: "up", Source: tools.BuiltinOrigin()}

// upTool is an upstream tool exposed as name, offered by the server its
// name starts with (SERVER__tool), as the upstream provider sets it.
func upTool(name string) tools.Entry {
	server, _, _ := strings.Cut(name, "__")
	return tools.Entry{Provider: upstreamProvider, Tool: &testTool{tools.Spec{Name: name, Permission: tools.PermUpstream, Server: server}}}
}

// TestServerPatternMatchesHashedNames: a SERVER__* pattern is about the
// server that offers a tool, also when its exposed name was shortened with
// a hash and no longer starts with SERVER__ (a long server name, or a low
// upstream_tool_name_max): a deny hides and refuses it, a bind grants it.
func TestServerPatternMatchesHashedNames(t *testing.T) {
	hashed := tools.Entry{Provider: upstreamProvider, Tool: &testTool{tools.Spec{Name: "a_very_long_ser_1a2b3c4d",
		Permission: tools.PermUpstream, Server: "a_very_long_server_name"}}}
	for _, tc := range []struct {
		perm string
		want bool
	}{{PermDeny, false}, {PermBind, true}, {PermAllow, true}} {
		c, _ := newTestChain(t, Options{}, TrustEntry{Entity: "cc:*", Level: 3,
			Perms: map[string]string{"a_very_long_server_name__*": tc.perm}}, TrustEntry{Entity: "oc:*", Level: 1,
			Perms: map[string]string{"A_Very_Long_Server_Name__*": tc.perm}})
		for _, entity := range []string{"cc:ws", "oc:ws"} {
			if got := c.Visible(caller(entity), hashed); got != tc.want {
				t.Errorf("%s with %s SERVER__*: visible %v, want %v", entity, tc.perm, got, tc.want)
			}
			d := c.Authorize(context.Background(), &Call{Caller: caller(entity), ToolName: hashed.Tool.Spec().Name, Entry: hashed})
			if d.Allowed() != tc.want {
				t.Errorf("%s with %s SERVER__*: call allowed %v, want %v", entity, tc.perm, d.Allowed(), tc.want)
			}
		}
	}
}

// TestBindingsDecideListAndCall: for every row shape, what Visible shows
// is exactly what a call may run (one function, Evaluate, decides both),
// and bindings restrict upstream tools only.
func TestBindingsDecideListAndCall(t *testing.T) {
	rows := []TrustEntry{
		{Entity: "cc:*", Level: 3}, // no bindings: every upstream tool
		{Entity: "cc:bound", Level: 3, Perms: map[string]string{"gh__issues": PermBind}}, // one tool
		{Entity: "oc:*", Level: 3, Perms: map[string]string{"fs__*": PermBind, "fs__write": PermDeny}},
		{Entity: "local:*", Level: 2, Perms: map[string]string{"gh__issues": PermBind}}, // binding grants below level 3
		{Entity: "device:*", Level: 1, Perms: map[string]string{"gh__*": PermAllow, "gh__admin": PermBind}},
		{Entity: "device:deny", Level: 3, Perms: map[string]string{"gh__*": PermDeny}},
	}
	c, _ := newTestChain(t, Options{}, rows...)
	names := []string{"read_file", "bash", "gh__issues", "gh__admin", "fs__read", "fs__write", "fsx__read", "fs_x__read"}
	entries := map[string]tools.Entry{}
	for _, n := range names {
		if tt, ok := specTools[n]; ok {
			entries[n] = tools.Entry{Provider: builtin, Tool: tt}
		} else {
			entries[n] = upTool(n)
		}
	}
	want := map[string]string{
		"cc:ws":       "read_file bash gh__issues gh__admin fs__read fs__write fsx__read fs_x__read",
		"cc:bound":    "read_file bash gh__issues",
		"oc:ws":       "read_file bash fs__read",
		"local:ws":    "read_file bash gh__issues",
		"device:ph":   "read_file gh__issues gh__admin",
		"device:deny": "read_file bash fs__read fs__write fsx__read fs_x__read",
	}
	for entity, w := range want {
		cl := caller(entity)
		var listed []string
		for _, n := range names {
			vis := c.Visible(cl, entries[n])
			d := c.Authorize(context.Background(), &Call{Caller: cl, Entry: entries[n], ToolName: n, RequestID: "1"})
			if vis != d.Allowed() {
				t.Errorf("%s %s: listed %v but a call is allowed=%v (%s): listing and dispatch disagree", entity, n, vis, d.Allowed(), d.Reason)
			}
			if vis {
				listed = append(listed, n)
			}
		}
		if got := strings.Join(listed, " "); got != w {
			t.Errorf("%s sees %q, want %q", entity, got, w)
		}
	}
	// The refusal says what to do.
	d := c.Authorize(context.Background(), &Call{Caller: caller("cc:bound"), Entry: entries["gh__admin"], ToolName: "gh__admin", RequestID: "1"})
	if d.Allowed() || d.Reason != ReasonNotBound || !strings.Contains(d.Err.Message, "clawd trust bind cc:bound gh__admin") {
		t.Errorf("unbound tool: %+v %v", d, d.Err)
	}
}

func TestValidatePermKey(t *testing.T) {
	for _, ok := range []string{"read_file", "gh__issues", "gh__*", "my-srv__*", "a1__*"} {
		if err := ValidatePermKey(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"*", "__*", "gh*", "gh__i*", "a__b__*", "a___*", "a.b__*", "gh__ *", ""} {
		if err := ValidatePermKey(bad); err == nil {
			t.Errorf("%q validated", bad)
		}
	}
}

// BenchmarkEvaluate: a built-in tool under a row with bindings costs what
// it did without (the bindings are only read for upstream tools); an
// upstream tool pays one pass over the row's permissions.
func BenchmarkEvaluate(b *testing.B) {
	row := TrustEntry{Entity: "cc:*", Level: 3, Perms: map[string]string{"gh__issues": PermBind, "fs__*": PermBind, "bash": PermDeny}}
	for _, bc := range []struct {
		name string
		spec *tools.Spec
	}{
		{"builtin", &tools.Spec{Name: "read_file", Permission: tools.PermRead}},
		{"builtin-nobindings", &tools.Spec{Name: "read_file", Permission: tools.PermRead}},
		{"upstream-pattern", &tools.Spec{Name: "fs__read", Permission: tools.PermUpstream}},
		{"upstream-unbound", &tools.Spec{Name: "web__get", Permission: tools.PermUpstream}},
	} {
		r := row
		if bc.name == "builtin-nobindings" {
			r = TrustEntry{Entity: "cc:*", Level: 3, Perms: map[string]string{"bash": PermDeny}}
		}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Evaluate(r, bc.spec)
			}
		})
	}
}
