package secrets

import (
	"strings"
)

// urlPasswordSpans adds to spans the password of each URL's userinfo
// (user:password@, :password@), up to the '@' userinfoEnd finds, so the
// user and the host stay shown. A URL runs from its "://" to the next
// "://", a blank (in a quoted URL, only after its path has begun: a
// password may hold a blank), or the quote that opens it (", ' or `,
// before its scheme; a quote escaped with '\\' in a "..." does not end it):
// a JSON string's email after the URL is not read as its userinfo. Each stretch
// of text is read by one URL only, so the cost stays linear.
func urlPasswordSpans(s string, spans [][2]int) [][2]int {
	return urlPasswordSpansAfter(s, spans, "://")
}

// jsonURLPasswordSpans is urlPasswordSpans for URLs whose slashes a JSON
// encoder escaped (https:\/\/u:pw@h\/x, as PHP writes them).
func jsonURLPasswordSpans(s string, spans [][2]int) [][2]int {
	return urlPasswordSpansAfter(s, spans, `:\/\/`)
}

func urlPasswordSpansAfter(s string, spans [][2]int, sep string) [][2]int {
	for p := strings.Index(s, sep); p >= 0; {
		start := p + len(sep)
		end := len(s)
		next := strings.Index(s[start:], sep)
		if next >= 0 {
			end = start + next
		}
		var quote byte
		i := p
		for i > 0 && isSchemeByte(s[i-1]) {
			i--
		}
		if i > 0 && (s[i-1] == '"' || s[i-1] == '\'' || s[i-1] == '`') {
			quote = s[i-1]
		}
		// A blank ends the URL, except in a quoted one before its path,
		// query or fragment: a password may hold a blank there.
		inPath := false
		for j := start; j < end; j++ {
			c := s[j]
			if c == quote && (quote != '"' || s[j-1] != '\\') || isBlank(c) && (quote == 0 || inPath) {
				end = j
				break
			}
			inPath = inPath || c == '/' || c == '?' || c == '#'
		}
		t := s[start:end]
		if at := userinfoEnd(t); at >= 0 {
			if colon := strings.IndexByte(t[:at], ':'); colon >= 0 && colon+1 < at {
				spans = append(spans, [2]int{start + colon + 1, start + at})
			}
		}
		if next < 0 {
			break
		}
		p = start + next
	}
	return spans
}

// userinfoEnd is the index in t (a URL after its "://", or a URL without
// one) of the '@' that ends its userinfo, or -1 when it has none. A
// password may hold an unencoded '@', '/', '?' or '#' (Python's and
// libpq's reading run to the last '@'):
//
//   - when no ':' comes before the first '/', '?' or '#' (outside an IPv6
//     host's brackets), there is no password, and an '@' after them is
//     the path's (https://h/@owner/mcp): the last '@' before them ends
//     the userinfo (a token given as the user);
//   - otherwise the last '@' does, except after a host and a port (digits
//     after the last ':'), where the path has begun when its first '/' is
//     followed by '@' (https://h:8443/@owner) or a later '?' or '#' comes
//     before an '@' (https://h:8443/mcp?to=a@b): only an '@' before those
//     counts. A password that reads as a port and a path
//     (https://u:12/ss@h) is still masked.
func userinfoEnd(t string) int {
	delim := strings.IndexAny(t, "/?#")
	if delim < 0 {
		delim = len(t)
	}
	hostport := t[:delim]
	hp := hostport
	if strings.HasPrefix(hp, "[") {
		if i := strings.IndexByte(hp, ']'); i >= 0 {
			hp = hp[i+1:]
		}
	}
	if !strings.Contains(hp, ":") {
		return strings.LastIndexByte(hostport, '@')
	}
	limit := len(t)
	if delim < len(t) && t[delim] == '/' && isPort(strings.TrimSuffix(hp[strings.LastIndexByte(hp, ':')+1:], `\`)) {
		if strings.HasPrefix(t[delim:], "/@") {
			limit = delim
		} else if i := strings.IndexAny(t[delim:], "?#"); i >= 0 {
			limit = delim + i
		}
		if i := strings.Index(t[delim:limit], "/@"); i >= 0 {
			limit = delim + i
		}
	}
	return strings.LastIndexByte(t[:limit], '@')
}

// isPort: p is digits only (an empty port too, as in h:/path).
func isPort(p string) bool {
	return strings.Trim(p, "0123456789") == ""
}

// isSchemeByte: c may be part of a URL's scheme (git+ssh, coap+tcp).
func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

// isBlank: c is ASCII white space.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// barePasswordSpans adds to spans the password of each USER:PASSWORD@HOST
// written without a scheme (git clone user:pass@host:repo, curl -x
// user:pass@proxy:3128, https_proxy=user:pass@proxy:3128): a word (from a
// blank, a quote or the text's start) holding a ':' after a user without
// '/', then '@' and a host (letters, digits, '.', '-', '_', or an IPv6
// [...]) followed by ':' or '/'. Not a URL's ("//" after the ':': the URL
// rule's), not a path segment that starts with '@' (h:8443/@owner), not
// an image digest (name:tag@sha256:...), not an address
// (mailto:bob@example.com has nothing after its host). The password may
// hold '/' and ':'; it ends at the '@'. Each '@' looks back no further
// than the '@' before it, and forward no further than the one after it:
// linear; a user that is an address (bob@example.com:pw@proxy:8080) is
// read from its '@' on.
func barePasswordSpans(s string, spans [][2]int) [][2]int {
	prev := -1
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '@')
		if i < 0 {
			return spans
		}
		at := off + i
		off = at + 1
		j := at
		for j > prev+1 && !isBlank(s[j-1]) && s[j-1] != '@' && s[j-1] != '"' && s[j-1] != '\'' && s[j-1] != '`' {
			j--
		}
		prev = at
		if !hostThenPath(s[at+1:]) {
			continue
		}
		w := s[j:at]
		colon := strings.IndexByte(w, ':')
		if colon <= 0 || colon+1 == len(w) || strings.Contains(w[:colon], "/") || strings.HasPrefix(w[colon+1:], "//") || w[len(w)-1] == '/' {
			continue
		}
		spans = append(spans, [2]int{j + colon + 1, at})
	}
}

// hostThenPath: h starts with a host followed by ':' or '/', and the host
// is not a digest's algorithm (sha256, sha512, blake3).
func hostThenPath(h string) bool {
	n := 0
	if strings.HasPrefix(h, "[") {
		n = strings.IndexByte(h, ']') + 1
	} else {
		for n < len(h) && (isNameByte(h[n]) || h[n] == '.') {
			n++
		}
	}
	if n <= 0 || n == len(h) || h[n] != ':' && h[n] != '/' {
		return false
	}
	host := strings.ToLower(h[:n])
	for _, alg := range []string{"sha", "blake"} {
		if strings.HasPrefix(host, alg) && isPort(host[len(alg):]) {
			return false
		}
	}
	return true
}
