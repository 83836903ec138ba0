package store

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/clawde/clawd/internal/support/secrets"
)

// SecretMap holds an upstream's environment or headers. The values are
// stored as given: a ${VAR} or $VAR reference stays unresolved (the daemon
// resolves it from its own environment when it starts the server or sends
// a request, secrets.ExpandRefs), a literal is kept in the 0600 database. Code that
// needs the values indexes or ranges the map; every way of printing one
// (fmt's verbs, JSON, slog) goes through Masked, so a literal never reaches
// a listing, a log line or an API answer by accident.
type SecretMap map[string]string

// Masked returns a copy with every value masked (secrets.MaskRefValue).
func (m SecretMap) Masked() map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = secrets.MaskRefValue(v)
	}
	return out
}

// MarshalJSON writes the masked values.
func (m SecretMap) MarshalJSON() ([]byte, error) { return json.Marshal(m.Masked()) }

// Format prints the masked values whatever the verb (%v, %+v, %#v, %s, %q).
func (m SecretMap) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "%v", m.Masked())
}

// LogValue gives slog the masked values.
func (m SecretMap) LogValue() slog.Value { return slog.AnyValue(m.Masked()) }
