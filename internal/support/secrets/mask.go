package secrets

import (
	"regexp"
	"slices"
	"strings"
)

var (
	// NAME=value, NAME: value, --name value for secret-looking names; the
	// name may be quoted ("password": "x" in JSON, 'key': 'x' in Python).
	// An unquoted value ends before a closing quote ('X-Api-Key: v' keeps
	// its quote).
	secretAssign = regexp.MustCompile(`(?i)((?:[a-z0-9_-]*(?:token|secret|passw(?:or)?d|passphrase|pwd|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth)[a-z0-9_-]*)["']?(?:\s*[=:]\s*|\s+))("[^"]*"|'[^']*'|[^\s;&|]*[^\s"';&|])`)
	// Environment-style NAME_KEY=value and NAME_PASS=value (OPENAI_KEY,
	// SMTP_PASS), and a wallet's MNEMONIC= or SEED_PHRASE= (a .env of
	// Hardhat or Foundry): upper case only, so a lower-case sort_key=name
	// stays.
	secretEnvAssign = regexp.MustCompile(`\b((?:[A-Z][A-Z0-9_]*_(?:KEY|PASS)|(?:[A-Z][A-Z0-9_]*_)?(?:MNEMONIC|SEED_PHRASE))=)("[^"]*"|'[^']*'|[^\s;&|]*[^\s"';&|])`)
	// A credential header's whole value, up to a quote, the line's end or
	// a shell's ; & or | (a header written unquoted into a command ends
	// there, and the commands after it are no secret: masking them would
	// hide what a command line runs), then any further NAME=VALUE pairs
	// after a ";" (a cookie's): Authorization and Proxy-Authorization in
	// any scheme (ApiKey, SSWS, ...), Cookie and Set-Cookie,
	// X-...-Key/Token/Secret/Auth headers.
	secretHeader = regexp.MustCompile(`(?i)\b((?:(?:proxy-)?authorization|(?:set-)?cookie|x-[a-z0-9-]*(?:key|token|secret|auth)[a-z0-9-]*)\s*:\s*)[^"'\r\n;&|]*[^\s"';&|](?:;[ \t]*[^\s=;"'&|]+=[^\s;"'&|]*)*`)
	// A password given to a flag that means "password" only for the tool
	// that precedes it in the same command (up to ; & | or a line's end);
	// the first such flag after the tool is masked:
	//   - mysql's (mysqldump's, mariadb's, ...) -pPASSWORD, attached: -p
	//     alone prompts, and the next word is a database;
	secretMySQLFlag = regexp.MustCompile(`(\b(?:mysql[a-z]*|mariadb(?:-[a-z]+)?)\b[^;&|\r\n]*?\s-p)("[^"]*"|'[^']*'|[^\s"';&|][^\s;&|]*)`)
	//   - a registry login's -p PASSWORD (docker, podman, helm, oras, ...);
	secretLoginFlag = regexp.MustCompile(`(\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|regctl)\b[^;&|\r\n]*?\blogin\b[^;&|\r\n]*?\s-p\s*)("[^"]*"|'[^']*'|[^\s"';&|-][^\s;&|]*)`)
	//   - sshpass -p PASSWORD;
	secretSSHPassFlag = regexp.MustCompile(`(\bsshpass\b[^;&|\r\n]*?\s-p\s*)("[^"]*"|'[^']*'|[^\s"';&|-][^\s;&|]*)`)
	//   - redis-cli -a PASSWORD or --pass PASSWORD;
	secretRedisFlag = regexp.MustCompile(`(\bredis-cli\b[^;&|\r\n]*?\s(?:-a\s*|--pass(?:\s+|=)))("[^"]*"|'[^']*'|[^\s"';&|-][^\s;&|]*)`)
	//   - curl's -b/--cookie NAME=VALUE (without "=" the value is a file
	//     of cookies, and stays).
	secretCookieFlag = regexp.MustCompile(`(\bcurl\b[^;&|\r\n]*?\s(?:-b\s*|--cookie(?:\s+|=)))("[^"=]*=[^"]*"|'[^'=]*=[^']*'|[^\s"';&|=]+=[^\s;&|]*)`)
	// openssl's pass:PASSWORD.
	secretPass = regexp.MustCompile(`(?i)\b(pass:)[^\s"';&|]+`)
	// Bearer xyz, Basic xyz, token xyz (GitHub's scheme).
	secretScheme = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+([A-Za-z0-9._~+/=-]+)`)
	// user:password@ in URLs, also without a user (redis://:password@).
	// The password runs to the last "@" before the host (Python's and
	// libpq's reading of an unencoded "@" in a password).
	secretURL = regexp.MustCompile(`(://[^/\s:@]*:)([^\s/]*[^@\s/])@`)
	// -u USER:PASSWORD, --user USER:PASSWORD (curl, wget, httpie); not a
	// URL (-u redis://...), whose password secretURL masks.
	secretUserFlag = regexp.MustCompile(`(^|\s)(-u\s*|--user(?:\s+|=))(["']?[^\s:"']*:)([^\s"';&|/][^\s"';&|]*)`)
	// Tokens whose prefix names them, too short or too regular to look
	// random: GitLab's glpat-/gldt-/glrt-/glptt- (20 characters after
	// the prefix), AWS access key ids (AKIA/ASIA and 16 more), SendGrid's
	// SG.id.secret and JWTs (eyJ header and payload, whose dots split
	// them into words the random-word rule may find too short). The
	// match runs on to the end of the word it is in (secretWord's
	// letters): the random-word rule looks only at what is left, and
	// would see the rest of a word that holds a token as a short word.
	secretPrefixed = regexp.MustCompile(`\b(?:(?:glpat|gldt|glrt|glptt)-[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA)[A-Z0-9]{16}\b|SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}|eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)[A-Za-z0-9_+/=-]*`)
	// A PEM private key's body, up to its END line or the text's end:
	// its last line may be too short to look random. The body starts on
	// the next line (a newline, or "\n" in a JSON or shell string): a
	// header alone (grep '-----BEGIN PRIVATE KEY-----' f) is no key.
	secretPEM = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----(?:\r?\n|(?:\\r)?\\n)((?s:.*?))(?:-----END |\z)`)
	// An Azure SAS token's signature, sig=..., percent-encoded into short
	// words.
	secretSig = regexp.MustCompile(`[?&;]sig=([^&\s"'#;]+)`)
	//   - sqlcmd's and bcp's -P PASSWORD;
	secretSQLCmdFlag = regexp.MustCompile(`(\b(?:sqlcmd|bcp)\b[^;&|\r\n]*?\s-P\s*)("[^"]*"|'[^']*'|[^\s"';&|-][^\s;&|]*)`)
	//   - vault login TOKEN (after its flags; a key=value word is a
	//     method's parameter).
	secretVaultLogin = regexp.MustCompile(`(\bvault\s+login\s+(?:-\S+\s+)*)("[^"]*"|'[^']*'|[^\s"'=;&|-][^\s"'=;&|]*)(?:[\s;&|]|\z)`)
	// Long runs of letters and digits that look random (keys, tokens).
	secretWord = regexp.MustCompile(`[A-Za-z0-9_+/=-]{32,}`)
)

// maskRules each find, in a text that contains (in any case) one of their
// hints, words without which their pattern cannot match (and their and,
// as written, when set), the spans to mask: from
// submatch index start of a match (3: the end of its first group, 4: the
// start of its second) to submatch index end (the match's end when 0).
// Most texts (a path, `go test ./...`) contain no hint, and skip the
// regular expressions, the costly part of a summary. Every rule reads the
// whole text as it was: one rule's mask never hides what another needs to
// see (masking "token mysql" must not hide mysql from the mysql rule,
// masking "token -u" must not hide -u from the -u rule).
//
// A hint must be in every text the rule's pattern matches. The patterns
// that ignore case also match the two non-ASCII letters that fold to
// ASCII ones, K (U+212A, k) and ſ (U+017F, s), which the hints are not
// compared with: a text that holds either runs every rule (hintsIn).
var maskRules = []struct {
	re         *regexp.Regexp
	start, end int
	fn         func(string, [][2]int) [][2]int // when set, finds the spans in place of re
	hints      []string
	and        string
	set        uint64 // the hints' bits in hintWords
}{
	{re: secretPass, start: 3, hints: []string{"pass:"}},
	{re: secretScheme, start: 4, hints: []string{"bearer", "basic", "token"}},
	{fn: assignSpans, hints: []string{"token", "secret", "passw", "passp", "pwd", "key", "credential", "auth"}},
	{re: secretEnvAssign, start: 3, hints: []string{"_key=", "_pass=", "mnemonic=", "seed_phrase="}},
	// A header's whole value: a scheme the others do not know, and its
	// credential. Its names hold auth (authorization), cookie, or key,
	// token, secret or auth after "x-": "x-" alone is in too many texts
	// (linux-amd64, max-age) to be a hint.
	{re: secretHeader, start: 3, hints: []string{"auth", "cookie", "key", "token", "secret"}},
	{re: secretMySQLFlag, start: 3, hints: []string{"mysql", "mariadb"}},
	{re: secretLoginFlag, start: 3, hints: []string{"login"}},
	{re: secretSSHPassFlag, start: 3, hints: []string{"sshpass"}},
	{re: secretRedisFlag, start: 3, hints: []string{"redis-cli"}},
	{re: secretCookieFlag, start: 3, hints: []string{"curl"}},
	{re: secretUserFlag, start: 8, hints: []string{"-u"}},
	{re: secretURL, start: 4, end: 5, hints: []string{"://"}, and: "@"},
	{re: secretPrefixed, hints: []string{"glpat-", "gldt-", "glrt-", "glptt-", "akia", "asia", "sg.", "eyj"}},
	{re: secretPEM, start: 2, end: 3, hints: []string{"private key"}},
	{re: secretSig, start: 2, end: 3, hints: []string{"sig="}},
	{re: secretSQLCmdFlag, start: 3, hints: []string{"sqlcmd", "bcp"}},
	{re: secretVaultLogin, start: 4, end: 5, hints: []string{"vault"}},
}

// hintWords are the rules' hints, each once (lower case); byFirst lists,
// for each byte, the hints that start with it in either case, so one pass
// over a text finds them all (hintsIn). init panics on a hint table it
// cannot index (an upper-case or one-byte hint, more hints than a rule's
// 64-bit set holds): that is a mistake in maskRules, seen by every test of
// the package at once, never a condition of input.
var (
	hintWords []string
	byFirst   [256][]uint8
)

func init() {
	index := map[string]int{}
	for i := range maskRules {
		for _, h := range maskRules[i].hints {
			n, ok := index[h]
			if !ok {
				n = len(hintWords)
				index[h] = n
				hintWords = append(hintWords, h)
				byFirst[h[0]] = append(byFirst[h[0]], uint8(n))
				if c := h[0]; c >= 'a' && c <= 'z' {
					byFirst[c-'a'+'A'] = append(byFirst[c-'a'+'A'], uint8(n))
				}
			}
			maskRules[i].set |= 1 << n
		}
	}
	for _, h := range hintWords {
		if len(h) < 2 || h != strings.ToLower(h) {
			panic("secrets: a hint word must be lower case, of two bytes or more: " + h)
		}
	}
	if len(hintWords) > 64 {
		panic("secrets: more than 64 hint words")
	}
}

// hintsIn is the set of hintWords s contains, in any (ASCII) case, as bits;
// all of them when s holds K (U+212A) or ſ (U+017F), which the patterns
// read as k and s.
func hintsIn(s string) uint64 {
	var set uint64
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0xe2 && strings.HasPrefix(s[i:], "\u212a") || c == 0xc5 && strings.HasPrefix(s[i:], "\u017f") {
			return 1<<len(hintWords) - 1
		}
		for _, n := range byFirst[s[i]] {
			// The second byte first: most first-letter hits end there,
			// without a call (every hint has two bytes or more).
			if h := hintWords[n]; len(s)-i >= len(h) && toLower(s[i+1]) == h[1] && strings.EqualFold(s[i:i+len(h)], h) {
				set |= 1 << n
			}
		}
	}
	return set
}

// toLower is c in lower case when it is an ASCII letter.
func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// MaskText replaces what looks like a secret in free text with "***":
//
//   - the value after a secret-looking name: NAME=value, NAME: value,
//     --name value, where the name contains token, secret, password,
//     passwd, passphrase, pwd, api_key, access_key, private_key,
//     credential or auth (any case; the name may be quoted, as a JSON key
//     is; a quoted value is masked up to its closing quote), and
//     environment-style NAME_KEY=value and NAME_PASS=value (upper case);
//   - the whole value of an Authorization, Proxy-Authorization, Cookie,
//     Set-Cookie or X-...-Key/Token/Secret/Auth header (X-Api-Key,
//     X-Auth-Token), up to a quote, the line's end or a shell's ; & or |
//     (a cookie's further NAME=VALUE pairs too), and the credentials
//     after "Bearer", "Basic" or "token";
//   - openssl's pass:PASSWORD;
//   - the password of user:password@ (or :password@) in a URL, up to the
//     last "@" before the host, and of -u/--user user:password (curl's
//     form); an Azure SAS token's sig=;
//   - tokens named by their prefix that are too short or too regular to
//     look random: GitLab's glpat-/gldt-/glrt-/glptt-, AWS access key
//     ids (AKIA/ASIA), SendGrid's SG.id.secret, JWTs (eyJ.eyJ.); and a
//     PEM private key's body, up to its END line;
//   - a wallet's MNEMONIC= or SEED_PHRASE= (upper case, as in a .env);
//   - a password given to a flag that is a password flag only for its
//     tool, the first one after the tool's name in the same command:
//     mysql's (mysqldump's, mariadb's, ...) -pPASSWORD written attached,
//     -p PASSWORD of docker, podman, nerdctl, buildah, skopeo, helm,
//     oras, crane or regctl after "login", sshpass -p PASSWORD, redis-cli
//     -a PASSWORD or --pass PASSWORD, sqlcmd's and bcp's -P PASSWORD,
//     vault login TOKEN, and curl's -b/--cookie NAME=VALUE;
//   - a run of 32 or more of [A-Za-z0-9_+/=-] that looks random
//     (looksRandom: hex digests, base64 keys and tokens of any length,
//     with or without slashes), after the path words that lead it
//     (owner/repo/commit/), except a SHA-256 digest the text names as
//     one ("sha256 <64 hex>", namedDigest).
//
// A mask ends before a command substitution, $(, in the value: that is
// code that fetches the secret, not the secret, and masking it would hide
// what a command runs (cutCode).
//
// It is best effort, not a proof that nothing secret remains: a short
// secret with an innocent name (`mytool -k hunter2`), a password after a
// flag of a tool not listed, a secret split across lines or quoted in
// ways the patterns do not know passes through. `mysql -p hunter2` is
// left as it is: there -p asks for the password and hunter2 is a
// database. Its cost grows linearly with len(s) (Go's regular
// expressions do not backtrack); callers that only keep a prefix should
// cut first (chain.ArgsSummary does).
func MaskText(s string) string {
	if hints := hintsIn(s); hints != 0 {
		var spans [][2]int
		for _, r := range maskRules {
			switch {
			case hints&r.set == 0 || r.and != "" && !strings.Contains(s, r.and):
			case r.fn != nil:
				spans = r.fn(s, spans)
			default:
				for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
					end := m[1]
					if r.end != 0 {
						end = m[r.end]
					}
					if m[r.start] >= 0 && m[r.start] < end {
						spans = append(spans, [2]int{m[r.start], end})
					}
				}
			}
		}
		s = MaskSpans(s, cutCode(s, spans), "***")
	}
	// The random-looking words are looked for in what the rules left: no
	// rule's span ends inside a word, so none hides part of one, and a
	// rule's name stays shown (password=***, not *** for a long
	// password=... word).
	if !hasLongWord(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range secretWord.FindAllStringIndex(s, -1) {
		// A path's leading words (com/owner/repo/commit/) are not part
		// of the random-looking rest.
		m[0] += plainSegments(s[m[0]:m[1]])
		w := s[m[0]:m[1]]
		if len(w) < 32 || !looksRandom(w) || namedDigest(s[:m[0]], w) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString("***")
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// cutCode ends each of spans before a shell command substitution, $(, in
// it: a value such as --token "$(curl ... | sh)" or KEY=$(cat f) is a
// command the shell runs to get the secret, not the secret, and masking it
// would hide what a command line runs. What comes before the $( stays
// masked (password=hunter2$(x) still hides hunter2). Limits: a secret
// written after the substitution in the same value is shown with it, and
// a backquoted substitution is masked like any value (backquotes are
// markdown's code marks in prose as often as a shell's).
func cutCode(s string, spans [][2]int) [][2]int {
	keep := spans[:0]
	for _, sp := range spans {
		if i := strings.Index(s[sp[0]:sp[1]], "$("); i >= 0 {
			sp[1] = sp[0] + i
		}
		if sp[0] < sp[1] {
			keep = append(keep, sp)
		}
	}
	return keep
}

// namedDigest: w is a SHA-256 digest (64 lowercase hex digits) that the
// text right before it names as one ("sha256 ", "sha256=", "sha256: ",
// "--sha256 "), as clawd's own supply-chain messages do. A digest is not
// a secret, and masking it would hide the `clawd mcp allow` line a user
// must copy. Limit: a 64-hex secret that someone labels sha256 is shown.
func namedDigest(before, w string) bool {
	if len(w) != 64 || strings.Trim(w, "0123456789abcdef") != "" {
		return false
	}
	before = strings.TrimRight(before, " =:")
	return len(before) >= 6 && strings.EqualFold(before[len(before)-6:], "sha256")
}

// hasLongWord reports whether s has a run of 32 characters secretWord
// matches.
func hasLongWord(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '/' || c == '=' || c == '-' {
			if n++; n >= 32 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

// MaskSpans replaces each of spans, byte ranges [start, end) of s in any
// order, overlapping or not, with mask; spans that overlap or touch become
// one. It sorts spans in place, and returns s itself when there are none.
func MaskSpans(s string, spans [][2]int, mask string) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[last:start])
		b.WriteString(mask)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// assignSpans adds secretAssign's values to spans, except a value that
// follows the name after whitespace alone and starts with "-": that is the
// next flag (--password-stdin -u bob), not a value; it stays, and the
// search goes on from it (--no-auth --password x). A value's last word is
// read as a name too.
func assignSpans(s string, spans [][2]int) [][2]int {
	pos, lastWord := 0, -1
	for pos < len(s) {
		m := secretAssign.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		start, val, end := pos+m[2], pos+m[4], pos+m[5]
		if s[val] == '-' && !strings.ContainsAny(s[start:val], "=:") {
			pos = val
			continue
		}
		// A value's last word that is a name, followed by a blank and a
		// word of lowercase letters, is a value followed by prose, not a
		// name and its value: --token=mytoken was not started keeps
		// "was". An = or : (token DB_PASSWORD: x), a flag (pwd=--password
		// x) or a next word of another shape (token token hunter2) is
		// still read as a name and its value. A value found across a line
		// break may be no value at all (a comment ending in "token", then
		// token VALUE): there its word stays a name too.
		if start == lastWord && s[start] != '-' && !strings.ContainsAny(s[start:val], "=:") && lowerWord(s[val:end]) {
			pos, lastWord = val, -1
			continue
		}
		spans = append(spans, [2]int{val, end})
		// The value may end in a name whose own value follows it (token
		// DB_PASSWORD: x, pwd="api_key": "x"): the search goes on from
		// that last word. Only the last: a name earlier in the value has
		// a value that ends within it. Going back no further than the
		// last word keeps the cost linear.
		pos = end
		for pos > val && strings.IndexByte(`"':= `, s[pos-1]) >= 0 {
			pos--
		}
		for pos > val && isNameByte(s[pos-1]) {
			pos--
		}
		lastWord = pos
		if strings.ContainsAny(s[start:val], "\r\n") {
			lastWord = -1
		}
	}
	return spans
}

// lowerWord: w is all lowercase ASCII letters (prose, not a token).
func lowerWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

// isNameByte: c may be part of secretAssign's name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// plainSegments is the length of w's leading slash-ended segments that
// are words, not noise: no digit and at most one change of case (com/,
// owner/, Documents/).
func plainSegments(w string) int {
	n := 0
	for {
		i := strings.IndexByte(w[n:], '/')
		if i < 0 {
			return n
		}
		seg := w[n : n+i]
		if !plainWord(seg) {
			return n
		}
		n += i + 1
	}
}

// plainWord: seg has no digit and at most one change of case.
func plainWord(seg string) bool {
	changes := 0
	for j := 0; j < len(seg); j++ {
		if seg[j] >= '0' && seg[j] <= '9' {
			return false
		}
		if j > 0 && isUpper(seg[j]) != isUpper(seg[j-1]) {
			changes++
		}
	}
	return changes <= 1
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// looksRandom: a long word that looks like a key rather than a name:
//
//   - 4 or more digits and 4 or more letters, and no slash (a hex digest,
//     most base64 keys); a word with a slash is a path more often than
//     not (backups/2024/12/04/db);
//   - or, slash or not, lower-case letters in short runs, as in random
//     text (about 1.7 letters a run in base64 or hex), where names have
//     runs of whole words (TestArgsSummary, some_module_name: 3 or more):
//     at least 4 runs averaging at most 2.5 letters. This is what finds
//     base64 with slashes (wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY) or
//     with few digits.
func looksRandom(w string) bool {
	var digits, letters, lower, lowerRuns int
	for i := 0; i < len(w); i++ {
		switch r := w[i]; {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z':
			letters++
			lower++
			if i == 0 || w[i-1] < 'a' || w[i-1] > 'z' {
				lowerRuns++
			}
		case r >= 'A' && r <= 'Z':
			letters++
		}
	}
	if letters < 4 {
		return false
	}
	if digits >= 4 && !strings.Contains(w, "/") {
		return true
	}
	return lowerRuns >= 4 && 2*lower <= 5*lowerRuns
}
