package upstream

import (
	"context"
	"slices"
	"testing"
)

// SecretValues lists what the audit log masks: each resolved value and
// each referenced variable's value apart, longest first, without short
// values and absolute paths; a value whose reference is unset adds
// nothing.
func TestSecretValues(t *testing.T) {
	env := map[string]string{"TOKEN": "tok-0123456789", "HOME": "/home/someone", "SHORT": "abc"}
	m := NewManager(nil, Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	defer m.Close(context.Background())
	m.Apply(context.Background(), []ServerConfig{
		{Name: "a", Transport: TransportStdio, Command: "/bin/true",
			Env: map[string]string{"K": "literal-secret-value", "D": "${HOME}/data", "S": "${SHORT}", "N": "on"}},
		{Name: "b", Transport: TransportHTTP, URL: "https://example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X": "${UNSET}"}},
	})
	got := m.SecretValues()
	want := []string{"Bearer tok-0123456789", "literal-secret-value", "tok-0123456789"}
	if !slices.Equal(got, want) {
		t.Errorf("SecretValues() = %q, want %q", got, want)
	}
}
