package secrets

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// References to the environment in an upstream server's env and header
// values: ${NAME} and $NAME ("$$" for a literal '$'). The values are
// stored with their references unresolved; ExpandRefs resolves them when a
// server is started or a request sent, MaskRefValue shows them. Both clawd's store (validation,
// listings) and its upstream connections use these, so what counts as a
// reference, and which variables may never be referenced, is decided once.

// IsEnvName reports whether s is a POSIX-portable variable name:
// [A-Za-z_][A-Za-z0-9_]*.
func IsEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// clipText cuts s to at most n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// refSegment is a piece of a value: literal text or a variable name.
type refSegment struct {
	text string // the literal text ("$$" read as "$"), or the variable's name
	ref  bool
	raw  string // the piece as written: "${NAME}", "$NAME", "pa$$word"
}

// splitRefs cuts a value into literal text and variable references:
// ${NAME} and $NAME with NAME = [A-Za-z_][A-Za-z0-9_]*. "$$" is one literal
// '$' (as in Compose files and Makefiles), so any value can be written:
// "pa$$word" is the password pa$word, not "pa" and the variable word. Any
// other '$' not followed by '{' or a name character is literal. An
// unterminated "${" or a "${...}" that is not a name is an error, so a
// typo is found when the value is stored rather than when the server
// starts.
func splitRefs(v string) ([]refSegment, error) {
	var segs []refSegment
	litStart := 0
	// A literal piece pairs its "$$" left to right as this loop does: a
	// lone '$' in it is never followed by another.
	flush := func(end int) {
		if raw := v[litStart:end]; raw != "" {
			segs = append(segs, refSegment{text: strings.ReplaceAll(raw, "$$", "$"), raw: raw})
		}
	}
	for i := 0; i < len(v); {
		if v[i] != '$' || i+1 >= len(v) {
			i++
			continue
		}
		if v[i+1] == '$' {
			i += 2
			continue
		}
		if v[i+1] == '{' {
			end := strings.IndexByte(v[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ${ at byte %d; write ${NAME}, or $$ for a literal '$'", i+1)
			}
			name := v[i+2 : i+2+end]
			if !IsEnvName(name) {
				return nil, fmt.Errorf("${%s} is not a variable name (letters, digits and '_', not starting with a digit); write $$ for a literal '$'", clipText(name, 40))
			}
			flush(i)
			segs = append(segs, refSegment{text: name, ref: true, raw: v[i : i+3+end]})
			i += 3 + end
			litStart = i
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
		i, litStart = j, j
	}
	flush(len(v))
	return segs, nil
}

// CheckRefs reports what is wrong with the references in a value about to
// be stored: one that does not parse, or one naming clawd's own variables,
// which never reach an upstream.
func CheckRefs(v string) error {
	segs, err := splitRefs(v)
	if err != nil {
		return err
	}
	for _, s := range segs {
		if s.ref && IsClawdVar(s.text) {
			return fmt.Errorf("${%s} is one of clawd's own variables, which never reach an upstream", s.text)
		}
	}
	return nil
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
// a request is sent, and reads "$$" as '$'. An unset variable and one of clawd's own (CLAWD_*,
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
		if IsClawdVar(s.text) {
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

// MaskRefValue is how an env or header value is shown. References are
// shown as written ("${GITHUB_TOKEN}": they name a variable, not a value).
// A value without references is masked whole with secrets.MaskValue
// ("sk-****wxyz", or "****" under 20 characters). In a value that mixes
// both, a literal piece is kept only when it cannot hold a secret (an auth
// scheme word such as "Bearer " or only separators, as in
// "${USER}:${PASS}"); any other literal piece becomes "****". A value that
// does not parse is masked whole.
func MaskRefValue(v string) string {
	segs, err := splitRefs(v)
	if err != nil {
		return MaskValue(v)
	}
	hasRef := false
	for _, s := range segs {
		hasRef = hasRef || s.ref
	}
	if !hasRef {
		return MaskValue(v)
	}
	var b strings.Builder
	for _, s := range segs {
		switch {
		case s.ref:
			b.WriteString(s.raw)
		case harmlessLiteral(s.text):
			b.WriteString(s.raw)
		default:
			b.WriteString(Masked)
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

// MaskURL is how a configured upstream URL is shown everywhere: the REST
// API's url field, `clawd mcp list/show`, the messages that name a URL
// (a refused one included) and the text an upstream's errors quote it in.
// Whether or not raw parses:
//
//   - the userinfo (user, password, a token given as the user) is "***":
//     everything before the '@' userinfoEnd finds, which reads a password
//     holding an unencoded '@', '/', '?' or '#' to its end (a parser
//     would read them as the path's, the query's or the fragment's start
//     and show the password's beginning); an '@' that starts a path
//     segment (https://h/@owner/mcp, https://h:8443/@owner/mcp) is the
//     path's, and the host stays shown; a URL without a scheme
//     (//u:pw@h, u:pw@host:repo), or in the path, has its userinfo
//     hidden too;
//   - every query value is masked as a configured secret (MaskRefValue:
//     "sup****0123", "****" under 20 characters, a ${VAR} reference as
//     written), and a query piece without '=' (?TOKEN) is "****"; a query
//     that does not parse is "****" whole;
//   - a #fragment (never sent, refused when stored) is "****";
//   - the rest goes through MaskText (a token-like path segment, as in
//     webhook URLs, becomes "***").
//
// Scheme, host, port and path are otherwise shown as given.
func MaskURL(raw string) string {
	authority := 0
	first := strings.Index(raw, "://")
	if first >= 0 {
		authority = first + 3
	} else if strings.HasPrefix(raw, "//") {
		authority = 2
	}
	var spans [][2]int
	if at := userinfoEnd(raw[authority:]); at >= 0 {
		spans = append(spans, [2]int{authority, authority + at})
	}
	// A URL in the path (https://h/go/https://tok@h2) has its userinfo
	// hidden too; each reads up to the next "://".
	for p := first; p >= 0; {
		start := p + 3
		next := strings.Index(raw[start:], "://")
		end := len(raw)
		if next >= 0 {
			end = start + next
		}
		if at := userinfoEnd(raw[start:end]); p != first && at >= 0 {
			spans = append(spans, [2]int{start, start + at})
		}
		if next < 0 {
			break
		}
		p = end
	}
	s := MaskSpans(raw, spans, "***")
	s, frag, hasFrag := strings.Cut(s, "#")
	s, query, hasQuery := strings.Cut(s, "?")
	s = MaskText(s)
	if hasQuery {
		s += "?" + maskQuery(query)
	}
	if hasFrag && frag != "" {
		s += "#" + Masked
	}
	return s
}

// maskQuery is MaskURL's query: a "****" for each piece without '=' or
// whose name is not a plain name (queryName), then the named values
// sorted by name (stable), each through MaskRefValue. A query
// url.ParseQuery refuses (a ';', a bad escape) is "****" whole.
func maskQuery(query string) string {
	type pair struct{ k, v string }
	var pairs []pair
	var parts []string
	for _, piece := range strings.Split(query, "&") {
		if piece == "" {
			continue
		}
		if strings.Contains(piece, ";") {
			return Masked
		}
		k, v, ok := strings.Cut(piece, "=")
		if !ok || !queryName(k) {
			parts = append(parts, Masked)
			continue
		}
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return Masked
		}
		pairs = append(pairs, pair{k, v})
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return strings.Compare(a.k, b.k) })
	for _, p := range pairs {
		parts = append(parts, url.QueryEscape(p.k)+"="+MaskRefValue(p.v))
	}
	return strings.Join(parts, "&")
}

// queryName: k, as written, is a name a query shows plainly: letters,
// digits and _ . - [ ] only, and nothing MaskText would mask (a long
// random-looking word).
func queryName(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isNameByte(c) && c != '.' && c != '[' && c != ']' {
			return false
		}
	}
	return k != "" && MaskText(k) == k
}

// MaskTextWithURL is MaskText for text about an upstream whose configured
// URL is rawURL: every occurrence of that URL (as Go's url.Error quotes a
// request's) is first shown as MaskURL shows it, so a query value the
// free-text patterns do not recognise (?key=..., ?api=...) is masked here
// as in the URL field itself.
//
// The URL is also looked for as Go writes it back (url.URL.String, what
// an http.Request's errors quote), which escapes what raw may have
// written plainly (a non-ASCII path).
func MaskTextWithURL(text, rawURL string) string {
	if rawURL == "" {
		return MaskText(text)
	}
	if strings.Contains(text, rawURL) {
		text = strings.ReplaceAll(text, rawURL, MaskURL(rawURL))
	}
	if u, err := url.Parse(rawURL); err == nil {
		if s := u.String(); s != rawURL && strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, MaskURL(s))
		}
	}
	return MaskText(text)
}
