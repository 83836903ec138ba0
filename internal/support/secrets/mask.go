package secrets

import (
	"slices"
	"strings"
)

// hintWords are the rules' hints, each once (lower case); byFirst lists,
// for each byte, the hints that start with it in either case, so one pass
// over a text finds them all (hintsIn). init panics on a hint table it
// cannot index (an upper-case or one-byte hint, more hints than a
// hintSet holds) and on a rule that neither hints nor an and selects:
// that is a mistake in maskRules, seen by every test of the package at
// load, never a condition of input.
var (
	hintWords []string
	byFirst   [256][]uint8
	allHints  hintSet
	// second[c] has, as bits, the second bytes of the hints that start
	// with c: most bytes of a text start no hint, and this tells so
	// without going through byFirst.
	second [256][4]uint64
)

// hintSet is a set of hintWords, by their index, as bits.
type hintSet [2]uint64

func (h *hintSet) add(n int) { h[n/64] |= 1 << (n % 64) }

// meets: h and o have a hint in common.
func (h hintSet) meets(o hintSet) bool { return h[0]&o[0] != 0 || h[1]&o[1] != 0 }

func init() {
	index := map[string]int{}
	for i := range maskRules {
		for _, h := range maskRules[i].hints {
			if len(h) < 2 || h != strings.ToLower(h) {
				// A check of the static maskRules table, never of input:
				// every test of the package loads it.
				panic("secrets: a hint word must be lower case, of two bytes or more: " + h)
			}
			n, ok := index[h]
			if !ok {
				n = len(hintWords)
				if n == 128 {
					// The same kind of check: before hintSet.add
					// indexes past its two words.
					panic("secrets: more than 128 hint words")
				}
				index[h] = n
				hintWords = append(hintWords, h)
				byFirst[h[0]] = append(byFirst[h[0]], uint8(n))
				second[h[0]][h[1]>>6] |= 1 << (h[1] & 63)
				if c := h[0]; c >= 'a' && c <= 'z' {
					byFirst[c-'a'+'A'] = append(byFirst[c-'a'+'A'], uint8(n))
					second[c-'a'+'A'][h[1]>>6] |= 1 << (h[1] & 63)
				}
			}
			maskRules[i].set.add(n)
		}
	}
	for n := range hintWords {
		allHints.add(n)
	}
	for _, r := range maskRules {
		if r.set == (hintSet{}) {
			if r.and == "" {
				// A static-table check, as above: maskRules, not input.
				panic("secrets: a rule without hints needs an and")
			}
			hintlessRules = append(hintlessRules, r)
		}
	}
}

// hintlessRules are the rules without hints: a text that holds one of
// their and strings is read by them even when it holds no hint.
var hintlessRules []maskRule

// anyHintless: s holds the and of one of hintlessRules.
func anyHintless(s string) bool {
	for _, r := range hintlessRules {
		if strings.Contains(s, r.and) {
			return true
		}
	}
	return false
}

// hintsIn is the set of hintWords s contains, in any (ASCII) case, as bits;
// all of them when s holds K (U+212A) or ſ (U+017F), which the patterns
// read as k and s.
func hintsIn(s string) hintSet {
	var set hintSet
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0xe2 && strings.HasPrefix(s[i:], "\u212a") || c == 0xc5 && strings.HasPrefix(s[i:], "\u017f") {
			return allHints
		}
		// Every hint has two bytes or more: the second byte first.
		if i+1 == len(s) {
			break
		}
		if b := toLower(s[i+1]); second[s[i]][b>>6]&(1<<(b&63)) == 0 {
			continue
		}
		for _, n := range byFirst[s[i]] {
			if h := hintWords[n]; len(s)-i >= len(h) && toLower(s[i+1]) == h[1] && strings.EqualFold(s[i:i+len(h)], h) {
				set.add(int(n))
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
//     credential or auth, or ends in psk, account_key or
//     subscription_key (any case; the name may be quoted, as a JSON key
//     is; a quoted value is masked up to its closing quote; make's :=
//     and ?= are read as =), and <NAME>value</NAME> for such a name,
//     environment-style NAME_KEY=, NAME_PASS=, NAME_PW=, NAME_SALT=,
//     NAME_COOKIE=, PASS=, PW= and SSHPASS= (upper case), and name_pass,
//     name-pass, name_pw, namePass or pass (lower case) with = or : and a
//     value that is not code (passSpans), --name-pass VALUE and --pass
//     VALUE;
//   - the whole value of an Authorization, Proxy-Authorization, Cookie,
//     Set-Cookie or X-...-Key/Token/Secret/Auth header (X-Api-Key,
//     X-Auth-Token), up to a quote, the line's end or a shell's ; & or |
//     (a cookie's further NAME=VALUE pairs too), and the credentials
//     after "Bearer", "Basic" or "token";
//   - openssl's pass:PASSWORD;
//   - the password of user:password@ (or :password@) in a URL, up to the
//     last "@" before the host (it may hold '/', '?', '#'; userinfoEnd;
//     also after a JSON-escaped https:\/\/), of USER:PASSWORD@HOST
//     without a scheme (barePasswordSpans), and of -u/--user
//     user:password (curl's form); a query value named sig (an Azure SAS
//     token's), signature, key, code, session, sessionid or sid;
//   - tokens named by their prefix that are too short or too regular to
//     look random: GitLab's glpat-/gldt-/glrt-/glptt-, AWS access key
//     ids (AKIA/ASIA), SendGrid's SG.id.secret, JWTs (eyJ.eyJ.); and a
//     PEM private key's body, up to its END line;
//   - a Discord bot token (discordSpans), by its shape;
//   - a wallet's MNEMONIC= or SEED_PHRASE= (upper case, as in a .env);
//   - a password given to a flag that is a password flag only for its
//     tool, the first one after the tool's name in the same command:
//     mysql's (mysqldump's, mariadb's, ...) -pPASSWORD written attached,
//     -p PASSWORD of docker, podman, nerdctl, buildah, skopeo, helm,
//     oras, crane, regctl, az, oc or cf after "login", sshpass -p
//     PASSWORD, redis-cli -a PASSWORD or --pass PASSWORD, sqlcmd's and
//     bcp's -P PASSWORD,
//     vault login TOKEN, and curl's -b/--cookie NAME=VALUE;
//   - the password flags of tools where a flag means password
//     (toolFlags: mongo's and twine's -p, ldap tools' -w, keytool's
//     -storepass, zip's -P, 7z's -pPASSWORD, smbclient's -U user%PASSWORD,
//     ssh-keygen's -N and -P, ...), Oracle's USER/PASSWORD, PowerShell's
//     ConvertTo-SecureString PASSWORD, SQL's IDENTIFIED BY PASSWORD,
//     DB2's USING PASSWORD, a .pgpass line's PASSWORD (port *, 5432,
//     5433 or 6432, or in a text that names pgpass: its hints);
//   - a password given as a positional argument (positionalSpans):
//     htpasswd -b's, openssl passwd's, mkpasswd's, wpa_passphrase's,
//     poetry config http-basic.X's, rabbitmqctl add_user's, net user's
//     and net use's, dscl -passwd's; and one echoed into sudo -S, passwd
//     --stdin, kinit, a --password-stdin or chpasswd (user:password);
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
	if hints := hintsIn(s); hints != (hintSet{}) || anyHintless(s) {
		var spans [][2]int
		rules := maskRules
		if hints == (hintSet{}) {
			rules = hintlessRules
		}
		for _, r := range rules {
			switch {
			case r.set != (hintSet{}) && !hints.meets(r.set) || r.and != "" && !strings.Contains(s, r.and):
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
// read as a name too. A name that is a URL's user or host is no name.
func assignSpans(s string, spans [][2]int) [][2]int {
	pos, lastWord := 0, -1
	for pos < len(s) {
		m := secretAssign.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		start, val, end := pos+m[2], pos+m[4], pos+m[5]
		val, end, prose := valueAfterWord(s, start, val, end)
		if s[val] == '-' && !prose && !strings.ContainsAny(s[start:val], "=:") {
			pos = val
			continue
		}
		// A URL's user or host (https://oauth2:TOKEN@host, https://auth:8443/):
		// the URL rule masks a password there, and the host stays shown.
		if s[val-1] == ':' && strings.HasSuffix(s[:start], "://") {
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

// valueAfterWord: where secretAssign read a word between a name and its
// value as the value, the value is the word after it, and prose reports
// that it was a linking verb. Two such words: make's and a shell's := ?=
// += (PASSWORD := x), and in prose, after a name (not a flag) and blanks
// alone, a linking verb (the password is hunter2, the token was abc).
// Without a word after it the value stays as read.
func valueAfterWord(s string, start, val, end int) (int, int, bool) {
	op := s[val:end]
	verb := s[start] != '-' && !strings.ContainsAny(s[start:val], "=:") && linkingVerb(op)
	if !verb && op != "=" && op != "?=" && op != "+=" && op != ":=" {
		return val, end, false
	}
	k := end
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if v, ok := assignedValue(s, k); ok && k > end {
		return v[0], v[1], verb
	}
	return val, end, false
}

// linkingVerb: w joins a name to its value in prose (the password is x).
func linkingVerb(w string) bool {
	switch strings.ToLower(w) {
	case "is", "was", "are", "were", "be":
		return true
	}
	return false
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
