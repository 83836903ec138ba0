package store

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/clawde/clawd/internal/support/secrets"
)

// SecretMap holds an upstream's environment or headers. The values are
// stored as given: a ${VAR} or $VAR reference stays unresolved (the daemon
// resolves it from its own environment when it starts the server or sends
// a request, ExpandRefs), a literal is kept in the 0600 database. Code that
// needs the values indexes or ranges the map; every way of printing one
// (fmt's verbs, JSON, slog) goes through Masked, so a literal never reaches
// a listing, a log line or an API answer by accident.
type SecretMap map[string]string

// Masked returns a copy with every value masked (MaskSecretValue).
func (m SecretMap) Masked() map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = MaskSecretValue(v)
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

// refSegment is a piece of a value: literal text or a variable name.
type refSegment struct {
	text string // the literal text, or the variable's name
	ref  bool
	raw  string // a reference as written: "${NAME}" or "$NAME"
}

// splitRefs cuts a value into literal text and variable references:
// ${NAME} and $NAME with NAME = [A-Za-z_][A-Za-z0-9_]*. A '$' not followed
// by '{' or a name character is literal. An unterminated "${" or a "${...}"
// that is not a name is an error, so a typo is found when the value is
// stored rather than when the server starts.
func splitRefs(v string) ([]refSegment, error) {
	var segs []refSegment
	lit := 0
	flush := func(end int) {
		if end > lit {
			segs = append(segs, refSegment{text: v[lit:end]})
		}
	}
	for i := 0; i < len(v); {
		if v[i] != '$' || i+1 >= len(v) {
			i++
			continue
		}
		if v[i+1] == '{' {
			end := strings.IndexByte(v[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ${ at byte %d; write ${NAME}", i+1)
			}
			name := v[i+2 : i+2+end]
			if !envName(name) {
				return nil, fmt.Errorf("${%s} is not a variable name (letters, digits and '_', not starting with a digit)", printable(name, 40))
			}
			flush(i)
			segs = append(segs, refSegment{text: name, ref: true, raw: v[i : i+3+end]})
			i += 3 + end
			lit = i
			continue
		}
		j := i + 1
		for j < len(v) && (v[j] == '_' || v[j] >= 'A' && v[j] <= 'Z' || v[j] >= 'a' && v[j] <= 'z' || j > i+1 && v[j] >= '0' && v[j] <= '9') {
			j++
		}
		if j == i+1 {
			i++
			continue
		}
		flush(i)
		segs = append(segs, refSegment{text: v[i+1 : j], ref: true, raw: v[i:j]})
		i, lit = j, j
	}
	flush(len(v))
	return segs, nil
}

// Refs lists the variables a value refers to, in order.
func Refs(v string) []string {
	segs, _ := splitRefs(v)
	var out []string
	for _, s := range segs {
		if s.ref {
			out = append(out, s.text)
		}
	}
	return out
}

// ExpandRefs resolves a stored value's ${VAR} and $VAR references with
// lookup (the daemon's environment, os.LookupEnv) when a server starts or
// a request is sent. An unset variable and one of clawd's own (CLAWD_*,
// CLAWDE_*: tokens, session secrets) are errors naming the variable, never
// an empty or secret value sent to an upstream. The error never contains a
// resolved value.
func ExpandRefs(v string, lookup func(string) (string, bool)) (string, error) {
	segs, err := splitRefs(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range segs {
		if !s.ref {
			b.WriteString(s.text)
			continue
		}
		if secrets.IsClawdVar(s.text) {
			return "", fmt.Errorf("${%s} is one of clawd's own variables and is never passed to an upstream", s.text)
		}
		val, ok := lookup(s.text)
		if !ok {
			return "", fmt.Errorf("${%s} is not set in clawd's environment", s.text)
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// MaskSecretValue is how an env or header value is shown. References are
// shown as written ("${GITHUB_TOKEN}": they name a variable, not a value).
// A value without references is masked whole with secrets.MaskValue
// ("sk-****wxyz", or "****" under 20 characters). In a value that mixes
// both, a literal piece is kept only when it cannot hold a secret (an auth
// scheme word such as "Bearer " or only separators, as in
// "${USER}:${PASS}"); any other literal piece becomes "****". A value that
// does not parse is masked whole.
func MaskSecretValue(v string) string {
	segs, err := splitRefs(v)
	if err != nil {
		return secrets.MaskValue(v)
	}
	hasRef := false
	for _, s := range segs {
		hasRef = hasRef || s.ref
	}
	if !hasRef {
		return secrets.MaskValue(v)
	}
	var b strings.Builder
	for _, s := range segs {
		switch {
		case s.ref:
			b.WriteString(s.raw)
		case harmlessLiteral(s.text):
			b.WriteString(s.text)
		default:
			b.WriteString(secrets.Masked)
		}
	}
	return b.String()
}

// harmlessLiteral: an auth scheme word followed by spaces, or separators
// only.
func harmlessLiteral(s string) bool {
	if word := strings.TrimRight(s, " "); word != s {
		switch strings.ToLower(word) {
		case "bearer", "basic", "token":
			return true
		}
	}
	return strings.Trim(s, " :/-_.,;@") == ""
}

// MaskURL shows an upstream URL with every query value masked
// (MaskSecretValue: an API key in ?key= is a secret like a header) and
// the rest through secrets.MaskText (a token-like path segment, as in
// webhook URLs, becomes "***"). Scheme, host and port are shown as stored.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return secrets.MaskText(raw)
	}
	if u.RawQuery == "" {
		return secrets.MaskText(raw)
	}
	query := u.RawQuery
	u.RawQuery = ""
	base := secrets.MaskText(u.String())
	q, err := url.ParseQuery(query)
	if err != nil {
		return base + "?" + secrets.Masked
	}
	var parts []string
	for _, k := range sortedKeysMulti(q) {
		for _, v := range q[k] {
			parts = append(parts, url.QueryEscape(k)+"="+MaskSecretValue(v))
		}
	}
	return base + "?" + strings.Join(parts, "&")
}

func sortedKeysMulti(q url.Values) []string {
	m := make(map[string]string, len(q))
	for k := range q {
		m[k] = ""
	}
	return sortedKeys(m)
}
