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
	// More names whose value is a secret, kept out of secretAssign, which
	// runs on many texts: a Wi-Fi pre-shared key (psk="x", wifi-sec.psk x,
	// wpa-psk x), an Azure account or subscription key (--account-key x,
	// Ocp-Apim-Subscription-Key: x).
	secretOtherAssign = regexp.MustCompile(`(?i)((?:[a-z0-9_-]*psk|(?:account|subscription)[_-]?key)["']?(?:\s*[=:]\s*|\s+))("[^"]*"|'[^']*'|[^\s"';&|-][^\s;&|]*)`)
	// Environment-style NAME_KEY=value, NAME_PASS=value, NAME_PW=value,
	// NAME_SALT=value and NAME_COOKIE=value (OPENAI_KEY, SMTP_PASS, DB_PW,
	// WordPress's AUTH_SALT, Erlang's RABBITMQ_ERLANG_COOKIE), PASS= and
	// PW= alone, sshpass's SSHPASS=, and a wallet's MNEMONIC= or SEED_PHRASE= (a .env of
	// Hardhat or Foundry): upper case only, so a lower-case sort_key=name
	// stays.
	secretEnvAssign = regexp.MustCompile(`\b((?:[A-Z][A-Z0-9_]*_(?:KEY|SALT|COOKIE)|SSHPASS|(?:[A-Z][A-Z0-9_]*_)?(?:PASS|PW|MNEMONIC|SEED_PHRASE))=)("[^"]*"|'[^']*'|[^\s;&|]*[^\s"';&|])`)
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
	//   - a login's -p PASSWORD (docker, podman, helm, oras, ..., and the
	//     Azure, OpenShift and Cloud Foundry CLIs);
	secretLoginFlag = regexp.MustCompile(`(\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|regctl|az|oc|cf)\b[^;&|\r\n]*?\blogin\b[^;&|\r\n]*?\s-p\s*)("[^"]*"|'[^']*'|[^\s"';&|-][^\s;&|]*)`)
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
	// -u USER:PASSWORD, --user USER:PASSWORD (curl, wget, httpie); not a
	// URL (-u redis://...), whose password secretURL masks.
	// Also --proxy-user USER:PASSWORD (curl's proxy credentials).
	secretUserFlag = regexp.MustCompile(`(^|\s)(-u\s*|--(?:proxy-)?user(?:\s+|=))(["']?[^\s:"']*:)([^\s"';&|/][^\s"';&|]*)`)
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
	// Also the values of query parameters that carry a credential by
	// their name: a signature (AWS's, Google's), a key (Google's ?key=),
	// an OAuth code, a session id.
	secretSig = regexp.MustCompile(`[?&;](?:sig|(?i:signature|key|code|session|sessionid|sid|x-amz-signature|x-goog-signature|x-amz-security-token))=([^&\s"'#;]+)`)
	//   - sqlcmd's and bcp's -P PASSWORD;
	secretSQLCmdFlag = regexp.MustCompile(`(\b(?:sqlcmd|bcp)\b[^;&|\r\n]*?\s-P\s*)("[^"]*"|'[^']*'|[^\s"';&|-][^\s;&|]*)`)
	//   - vault login TOKEN (after its flags; a key=value word is a
	//     method's parameter).
	secretVaultLogin = regexp.MustCompile(`(\bvault\s+login\s+(?:-\S+\s+)*)("[^"]*"|'[^']*'|[^\s"'=;&|-][^\s"'=;&|]*)(?:[\s;&|]|\z)`)
	// A command that takes a password as a positional argument (its
	// name at a command's start or after a path's '/'), read word by
	// word by positionalSpans.
	secretPositionalCmd = regexp.MustCompile(`(?:^|[\s;&|(/"'` + "`" + `])(htpasswd|mkpasswd|wpa_passphrase|rabbitmqctl|dscl|openssl\s+passwd|poetry\s+config|net\s+use(?:r)?|cargo\s+login|vault\s+operator\s+unseal|consul\s+acl\s+set-agent-token|isql|mc\s+alias\s+set|mc\s+config\s+host\s+add|vault\s+kv\s+(?:put|patch))(?:\s|\z)`)
	// A password echoed (echo, printf, yes) into a command that reads it
	// from its input: sudo -S, passwd, smbpasswd, kinit, cryptsetup,
	// docker or podman secret create, a --password-stdin or --stdin, and
	// chpasswd's user:password (also from a here-string).
	secretEchoed = regexp.MustCompile(`\b(?:echo|printf|yes)\s+(?:-[neE]+\s+)*("[^"]*"|'[^']*'|[^\s"';&|]+)[ \t]*\|[^;&|\r\n]*?(?:\bsudo\s+(?:-[a-zA-Z]+\s+)*-[a-zA-Z]*S\b|passwd\b|\bkinit\b|\bcryptsetup\b|\bsecrets?\s+(?:create|versions\s+add)\b|\bsecret-tool\s+store\b|-stdin\b)`)
	// A here-string (<<< WORD) given to a command that reads a password
	// from its input, as secretEchoed's do (and a login).
	secretHereString = regexp.MustCompile(`(?:\bsudo\b|passwd\b|\bkinit\b|\bcryptsetup\b|\bsecrets?\s+(?:create|versions\s+add)\b|\bsecret-tool\s+store\b|-stdin\b|\blogin\b)[^;&|\r\n]*?<<<[ \t]*("[^"]*"|\$?'[^']*'|[^\s"';&|]+)`)
	secretChpasswd   = regexp.MustCompile(`(?:\becho\s+(?:-[neE]+\s+)*["']?[^\s:"';&|]+:([^\s"';&|]+)["']?[ \t]*\|[ \t]*(?:sudo\s+)?chpasswd\b|\bchpasswd[ \t]*<<<[ \t]*["']?[^\s:"';&|]+:([^\s"';&|]+))`)
	// Oracle's USER/PASSWORD[@DB] after sqlplus (sqlldr, expdp, impdp,
	// rman, dgmgrl), the first one after the tool's name, and in a JDBC
	// thin URL (jdbc:oracle:thin:USER/PASSWORD@host).
	secretOracle = regexp.MustCompile(`(?:\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\b[^;&|\r\n]*?[\s=]["']?[A-Za-z0-9_$#.]+/|(?i:\bthin:)[A-Za-z0-9_$#.]+/)("[^"]*"|[^\s@/"';&|]+)`)
	// SQL's IDENTIFIED BY PASSWORD (MySQL's and Oracle's CREATE/ALTER
	// USER), DB2's CONNECT TO DB USER U USING PASSWORD.
	secretIdentifiedBy = regexp.MustCompile(`(?i:\bidentified\s+(?:with\s+\S+\s+)?by\s+(?:password\s+)?|\buser\s+\S+\s+using\s+)("[^"]*"|'[^']*'|[^\s"';&|]+)`)
	// A .pgpass line, HOST:PORT:DB:USER:PASSWORD (PORT digits or *).
	secretPgpass = regexp.MustCompile(`(?:^|[\s"'])[^\s:"']+:(?:[0-9]+|\*):[^\s:"']+:[^\s:"']+:([^\s"']+)`)
	// An XML element whose name ends in a secret's: <password>X</password>
	// (Maven's settings.xml, a .NET config), <apiKey>, <client_secret>.
	secretXMLElement = regexp.MustCompile(`(?i)<([a-z0-9_.:-]*(?:token|secret|passw(?:or)?d|passphrase|api[_-]?key|access[_-]?key|private[_-]?key|credentials?))>([^<]*)</`)
	// An environment list's entry whose name is a secret's, as
	// Kubernetes (YAML or JSON) and ECS list them: name: DB_PASS, then
	// value: X on the next line, or {"name": "DB_PASS", "value": "X"}.
	secretEnvEntry = regexp.MustCompile(`(?i)\bname["']?:\s*["']?[a-z0-9_.-]*(?:token|secret|passw(?:or)?d|passphrase|pwd|pass|_pw|key|credentials?|auth)["']?\s*(?:,|\r?\n|\\n)\s*["']?value["']?:\s*("[^"]*"|'[^']*'|[^\s"',}]+)`)
	// PowerShell's ConvertTo-SecureString [-String] PASSWORD.
	secretSecureString = regexp.MustCompile(`(?i:\bConvertTo-SecureString\s+(?:-String\s+)?)("[^"]*"|'[^']*'|[^\s"'();|-][^\s"'();|]*)`)
	// Long runs of letters and digits that look random (keys, tokens).
	secretWord = regexp.MustCompile(`[A-Za-z0-9_+/=-]{32,}`)
)

// maskRule is one of maskRules.
type maskRule struct {
	re         *regexp.Regexp
	start, end int
	fn         func(string, [][2]int) [][2]int // when set, finds the spans in place of re
	hints      []string
	and        string
	set        hintSet // the hints' bits in hintWords
}

// maskRules each find, in a text that contains (in any case) one of their
// hints, words without which their pattern cannot match (and their and,
// as written, when set; a rule without hints needs its and only), the
// spans to mask: from
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
var maskRules = []maskRule{
	{re: secretPass, start: 3, hints: []string{"pass:"}},
	{re: secretScheme, start: 4, hints: []string{"bearer", "basic", "token"}},
	{fn: assignSpans, hints: []string{"token", "secret", "passw", "passp", "pwd", "key", "credential", "auth"}},
	{re: secretOtherAssign, start: 3, hints: []string{"psk", "accountkey", "account-key", "account_key", "subscription"}},
	{re: secretEnvAssign, start: 3, hints: []string{"_key=", "pass=", "pw=", "_salt=", "_cookie=", "mnemonic=", "seed_phrase="}},
	{fn: passSpans, hints: []string{"pass", "_pw", "-pw"}},
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
	{fn: urlPasswordSpans, hints: []string{"://"}, and: "@"},
	{fn: jsonURLPasswordSpans, hints: []string{`:\/\/`}, and: "@"},
	// No hint: an '@' is enough (and), and the scan is cheaper than a
	// regular expression.
	{fn: barePasswordSpans, and: "@"},
	// No hint either: its fixed part is a '.' (and), which the scan
	// looks at alone.
	{fn: discordSpans, and: "."},
	{re: secretPrefixed, hints: []string{"glpat-", "gldt-", "glrt-", "glptt-", "akia", "asia", "sg.", "eyj"}},
	{re: secretPEM, start: 2, end: 3, hints: []string{"private key"}},
	{re: secretSig, start: 2, end: 3, hints: []string{"sig=", "signature=", "key=", "code=", "session", "sid=", "security-token="}},
	{re: secretSQLCmdFlag, start: 3, hints: []string{"sqlcmd", "bcp"}},
	{re: secretVaultLogin, start: 4, end: 5, hints: []string{"vault"}},
	{fn: positionalSpans, hints: []string{"htpasswd", "mkpasswd", "wpa_passphrase", "rabbitmqctl", "dscl", "openssl", "poetry", "net use", "cargo", "unseal", "set-agent-token", "isql", "mc alias", "mc config", "vault"}},
	{fn: toolFlagSpans, hints: toolFlagHints},
	{re: secretOracle, start: 2, end: 3, hints: []string{"sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl", "thin:"}},
	{re: secretSecureString, start: 2, end: 3, hints: []string{"convertto-securestring"}},
	{re: secretXMLElement, start: 4, end: 5, hints: []string{"token", "secret", "passw", "passp", "key", "credential"}, and: "</"},
	{re: secretEnvEntry, start: 2, end: 3, hints: []string{"value"}, and: "name"},
	{re: secretIdentifiedBy, start: 2, end: 3, hints: []string{"identified", "using"}},
	{re: secretPgpass, start: 2, end: 3, hints: []string{"pgpass", ":*:", "5432:", "5433:", "6432:"}},
	{fn: echoedSpans, hints: []string{"echo", "printf", "yes"}, and: "|"},
	{re: secretHereString, start: 2, end: 3, hints: []string{"<<<"}},
	{fn: chpasswdSpans, hints: []string{"chpasswd"}},
}

// hintWords are the rules' hints, each once (lower case); byFirst lists,
// for each byte, the hints that start with it in either case, so one pass
// over a text finds them all (hintsIn). init panics on a hint table it
// cannot index (an upper-case or one-byte hint, more hints than a
// hintSet holds): that is a mistake in maskRules, seen by every test of
// the package at once, never a condition of input.
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
				panic("secrets: a hint word must be lower case, of two bytes or more: " + h)
			}
			n, ok := index[h]
			if !ok {
				n = len(hintWords)
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
	if len(hintWords) > 128 {
		panic("secrets: more than 128 hint words")
	}
	for n := range hintWords {
		allHints.add(n)
	}
	for _, r := range maskRules {
		if r.set == (hintSet{}) {
			if r.and == "" {
				panic("secrets: a rule without hints needs an and")
			}
			hintless = append(hintless, r.and)
			hintlessRules = append(hintlessRules, r)
		}
	}
}

// hintless are the and strings of the rules without hints
// (hintlessRules): a text that holds one of them is read by those rules
// even when it holds no hint.
var (
	hintless      []string
	hintlessRules []maskRule
)

// anyHintless: s holds one of hintless.
func anyHintless(s string) bool {
	for _, h := range hintless {
		if strings.Contains(s, h) {
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
//     oras, crane or regctl after "login", sshpass -p PASSWORD, redis-cli
//     -a PASSWORD or --pass PASSWORD, sqlcmd's and bcp's -P PASSWORD,
//     vault login TOKEN, and curl's -b/--cookie NAME=VALUE;
//   - the password flags of tools where a flag means password
//     (toolFlags: mongo's and twine's -p, ldap tools' -w, keytool's
//     -storepass, zip's -P, 7z's -pPASSWORD, smbclient's -U user%PASSWORD,
//     ssh-keygen's -N and -P, ...), Oracle's USER/PASSWORD, PowerShell's
//     ConvertTo-SecureString PASSWORD, SQL's IDENTIFIED BY PASSWORD,
//     DB2's USING PASSWORD, a .pgpass line's PASSWORD;
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
		// make's and a shell's := ?= += (PASSWORD := x): the value is
		// the word after the operator the pattern read as one.
		if op := s[val:end]; op == "=" || op == "?=" || op == "+=" || op == ":=" {
			k := end
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if v, ok := assignedValue(s, k); ok && k > end {
				val, end = v[0], v[1]
			}
		}
		if s[val] == '-' && !strings.ContainsAny(s[start:val], "=:") {
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

// discordSpans adds to spans each Discord bot token: the base64 of a
// numeric user id (24 to 26 characters, starting M, N or O and then D, T,
// j or z, as the base64 of ASCII digits does), '.', 6 characters (a
// timestamp), '.', and 27 or more (an HMAC), each of [A-Za-z0-9_-]. Its
// three words are too short for the random-word rule. Each '.' looks back
// at most 27 bytes, and forward over a run no later '.' reads again:
// linear.
func discordSpans(s string, spans [][2]int) [][2]int {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '.')
		if i < 0 {
			return spans
		}
		dot := off + i
		off = dot + 1
		if dot+8 > len(s) || s[dot+7] != '.' || tokenRun(s[dot+1:dot+7]) != 6 {
			continue
		}
		n := 0
		for n < 27 && dot-n > 0 && isNameByte(s[dot-n-1]) {
			n++
		}
		if n < 24 || n > 26 || !strings.ContainsRune("MNO", rune(s[dot-n])) || !strings.ContainsRune("DTjz", rune(s[dot-n+1])) {
			continue
		}
		m := tokenRun(s[dot+8:])
		if m < 27 {
			continue
		}
		spans = append(spans, [2]int{dot - n, dot + 8 + m})
		off = dot + 8 + m
	}
}

// tokenRun is the length of the run of [A-Za-z0-9_-] s starts with.
func tokenRun(s string) int {
	n := 0
	for n < len(s) && isNameByte(s[n]) {
		n++
	}
	return n
}

// passSpans adds to spans the value after a lower-case name_pass,
// name-pass or name_pw, a camelCase namePass, or pass alone, then an
// optional quote (a JSON or YAML key), then = or : (name_pass="x",
// smtp_pass: x, dbPass: 'x', ?pass=x), and after --pass or --name-pass
// and a blank (--db-pass x), except where the name or the value reads as
// code or prose:
//
//   - pass alone, not quoted, before ':' ("tests pass: 3"; openssl's
//     pass:X is the pass: rule's), and a camelCase namePass with a value
//     that is not quoted, unless after a bare '=' (a type, renderPass:
//     GPURenderPassEncoder, or code, shadowPass = new ShadowPass());
//   - a value that is a reference ($DB_PASS, "${DB_PASS}", %PASS%,
//     {{ .pass }}), a call or an index (make_pass(cfg), a[i]), a number
//     (first_pass=0), a literal (true, None, null), a type after ':'
//     (int, str), or a dotted name (self.config.x_pass).
//
// It looks at each "ass" and "pw" in s, a few bytes around it and the
// value after it (no regular expression: this runs on every text that
// holds "pass") and goes on after the value; a flag's name is looked back
// at over 64 bytes at most: linear.
func passSpans(s string, spans [][2]int) [][2]int {
	for _, suffix := range []string{"ass", "pw"} {
		for off := 0; ; {
			i := strings.Index(s[off:], suffix)
			if i < 0 {
				break
			}
			p := off + i // the name's 'p' or 'P'
			if suffix == "ass" {
				p--
			}
			end := off + i + len(suffix)
			off = end
			if p < 0 {
				continue
			}
			var prev byte
			if p > 0 {
				prev = s[p-1]
			}
			var bare, camel, snake bool
			switch {
			case s[p] == 'P' && suffix == "ass":
				camel = prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
			case s[p] == 'p':
				snake = prev == '_' || prev == '-'
				bare = suffix == "ass" && !isNameByte(prev)
			}
			if !bare && !camel && !snake {
				continue
			}
			if v, ok := flagValue(s, p, end); ok && suffix == "ass" {
				if !codeValue(s[v[0]:v[1]], false) {
					spans = append(spans, v)
				}
				off = v[1]
				continue
			}
			j := end
			quotedName := j < len(s) && (s[j] == '"' || s[j] == '\'')
			if quotedName {
				j++
			}
			k := j
			for k < len(s) && isBlank(s[k]) {
				k++
			}
			var sep string
			switch {
			case k < len(s) && s[k] == '=':
				k++
				for k < len(s) && isBlank(s[k]) {
					k++
				}
				sep = s[j:k]
			case j < len(s) && s[j] == ':':
				k = j + 1
				for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				sep = ":"
			default:
				continue
			}
			v, ok := assignedValue(s, k)
			if !ok {
				continue
			}
			// The search goes on after the value, read once.
			off = v[1]
			val := s[v[0]:v[1]]
			colon := sep == ":"
			quoted := val[0] == '"' || val[0] == '\''
			if colon && bare && !quotedName || camel && !quoted && sep != "=" || codeValue(val, colon) {
				continue
			}
			spans = append(spans, v)
		}
	}
	return spans
}

// flagValue is the value after --pass or --name-pass (its name runs from
// p, back to "--" at the text's start or after a blank, to end) and a
// blank: a quoted string, or a word that does not start with '-'.
func flagValue(s string, p, end int) ([2]int, bool) {
	b := p
	for b > 0 && p-b < 64 && (s[b-1] >= 'a' && s[b-1] <= 'z' || s[b-1] >= '0' && s[b-1] <= '9' || s[b-1] == '-') {
		b--
	}
	if !strings.HasPrefix(s[b:], "--") || b > 0 && !isBlank(s[b-1]) || strings.HasPrefix(s[b+2:], "-") || b+2 < p && s[p-1] != '-' {
		return [2]int{}, false
	}
	k := end
	for k < len(s) && isBlank(s[k]) {
		k++
	}
	if k == end || k == len(s) {
		return [2]int{}, false
	}
	if q := s[k]; q == '"' || q == '\'' {
		if c := strings.IndexByte(s[k+1:], q); c >= 0 {
			return [2]int{k, k + c + 2}, true
		}
		return [2]int{}, false
	}
	if strings.IndexByte("-;&|", s[k]) >= 0 {
		return [2]int{}, false
	}
	e := k
	for e < len(s) && !isBlank(s[e]) && strings.IndexByte(";&|", s[e]) < 0 {
		e++
	}
	return [2]int{k, e}, true
}

// assignedValue is the value at s[k:] after a name and its = or :, as
// secretAssign reads one: a quoted string to its closing quote, or a run
// up to a blank, ; & or |, without the quotes it ends with.
func assignedValue(s string, k int) ([2]int, bool) {
	if k == len(s) {
		return [2]int{}, false
	}
	if q := s[k]; q == '"' || q == '\'' {
		if c := strings.IndexByte(s[k+1:], q); c >= 0 {
			return [2]int{k, k + c + 2}, true
		}
	}
	e := k
	for e < len(s) && !isBlank(s[e]) && strings.IndexByte(";&|", s[e]) < 0 {
		e++
	}
	for e > k && (s[e-1] == '"' || s[e-1] == '\'') {
		e--
	}
	return [2]int{k, e}, e > k
}

// codeValue: v, a value after a name_pass, is code rather than a
// password (passSpans); typed: it came after ':', where a type may be.
func codeValue(v string, typed bool) bool {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		v = v[1 : len(v)-1]
		return v == "" || v[0] == '$' || v[0] == '%' && strings.HasSuffix(v, "%") || strings.HasPrefix(v, "{{")
	}
	switch {
	case v == "", strings.ContainsAny(v[:1], "$%{([<"), strings.ContainsAny(v, "()[]"),
		strings.Trim(v, "0123456789.:+-/") == "":
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "none", "null", "nil", "undefined", "yes", "no", "on", "off":
		return true
	case "int", "str", "bool", "float", "string", "number", "boolean", "bytes", "any", "object":
		return typed
	}
	// A dotted name: words of letters, digits and '_' that start with a
	// letter or '_', two or more.
	words := strings.Split(v, ".")
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		if w == "" || w[0] >= '0' && w[0] <= '9' || tokenRun(w) != len(w) || strings.Contains(w, "-") {
			return false
		}
	}
	return true
}

// positionalSpans adds to spans the passwords secretPositionalCmd's
// commands take as positional arguments, reading each command's words
// (cmdWords: at most 16, up to ; & | or a line's end; a redirection and
// its file are no argument):
//
//   - htpasswd with -b (batch): FILE USER PASSWORD, or USER PASSWORD
//     with -n (-C and -r take a value);
//   - openssl passwd: every positional word (-salt and -in take a value);
//   - mkpasswd: the first positional word (-m, -S, -R, -P and their long
//     forms take a value);
//   - wpa_passphrase SSID PASSWORD;
//   - poetry config http-basic.NAME USER PASSWORD, poetry config
//     pypi-token.NAME TOKEN;
//   - cargo login TOKEN, vault operator unseal KEY, consul acl
//     set-agent-token TYPE TOKEN;
//   - unixODBC's isql DSN USER PASSWORD, MinIO's mc alias set (mc config
//     host add) ALIAS URL ACCESS_KEY SECRET_KEY;
//   - vault kv put (patch) PATH KEY=VALUE...: each VALUE;
//   - rabbitmqctl add_user, change_password or authenticate_user USER
//     PASSWORD;
//   - net user USER PASSWORD, net use [DEVICE] \\SERVER\SHARE PASSWORD
//     (a word that starts with '/' is an option, "*" prompts);
//   - dscl NODE -passwd PATH [OLD] NEW: the words after PATH.
//
// The search goes on after the words read: linear.
func positionalSpans(s string, spans [][2]int) [][2]int {
	for pos := 0; pos < len(s); {
		m := secretPositionalCmd.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		cmd := strings.Join(strings.Fields(s[pos+m[2]:pos+m[3]]), " ")
		var buf [16][2]int
		words, end := cmdWords(s, pos+m[3], buf[:0])
		pos = max(end, pos+m[3])
		var flags string
		var args [][2]int
		word := func(i int) string { return s[args[i][0]:args[i][1]] }
		takesValue := map[string]string{
			"htpasswd": " -C -r ", "openssl passwd": " -salt -in ",
			"mkpasswd":    " -m -S -R -P --method --salt --rounds --password-fd ",
			"cargo login": " --registry --config -Z ",
		}[cmd]
		for i := 0; i < len(words); i++ {
			w := s[words[i][0]:words[i][1]]
			// A redirection (< f, >f, 2> f) and its file.
			if r := strings.TrimLeft(w, "0123456789"); r != "" && (r[0] == '<' || r[0] == '>') {
				if strings.Trim(r, "<>&") == "" {
					i++
				}
				continue
			}
			if len(w) > 1 && w[0] == '-' && cmd != "dscl" {
				flags += w[1:]
				if strings.Contains(takesValue, " "+w+" ") {
					i++
				}
				continue
			}
			args = append(args, words[i])
		}
		var mask [][2]int
		switch cmd {
		case "htpasswd":
			if n := 3 - strings.Count(flags, "n"); strings.Contains(flags, "b") && len(args) >= n && n > 0 {
				mask = args[n-1 : n]
			}
		case "openssl passwd":
			mask = args
		case "mkpasswd", "wpa_passphrase":
			if n := map[string]int{"mkpasswd": 1, "wpa_passphrase": 2}[cmd]; len(args) >= n {
				mask = args[n-1 : n]
			}
		case "poetry config":
			switch {
			case len(args) >= 3 && strings.HasPrefix(word(0), "http-basic."):
				mask = args[2:3]
			case len(args) >= 2 && strings.HasPrefix(word(0), "pypi-token."):
				mask = args[1:2]
			}
		case "cargo login", "vault operator unseal":
			mask = args[:min(1, len(args))]
		case "consul acl set-agent-token":
			if len(args) >= 2 {
				mask = args[1:2]
			}
		case "isql":
			if len(args) >= 3 {
				mask = args[2:3]
			}
		case "mc alias set", "mc config host add":
			if len(args) >= 4 {
				mask = args[3:4]
			}
		case "vault kv put", "vault kv patch":
			// PATH KEY=VALUE...: every value is the secret's (not
			// KEY=@file, KEY=- from the input).
			for _, a := range args[min(1, len(args)):] {
				if k := strings.IndexByte(s[a[0]:a[1]], '='); k > 0 && a[0]+k+1 < a[1] && strings.IndexByte("@-", s[a[0]+k+1]) < 0 {
					mask = append(mask, [2]int{a[0] + k + 1, a[1]})
				}
			}
		case "rabbitmqctl":
			for i := range args {
				switch word(i) {
				case "add_user", "change_password", "authenticate_user":
					if i+2 < len(args) {
						mask = args[i+2 : i+3]
					}
				}
			}
		case "net user", "net use":
			i := 1
			if cmd == "net use" {
				for i = 0; i < len(args) && !strings.HasPrefix(word(i), `\\`); i++ {
				}
				i++
			}
			if i < len(args) && word(i) != "*" && !strings.HasPrefix(word(i), "/") {
				mask = args[i : i+1]
			}
		case "dscl":
			for i := range args {
				if word(i) == "-passwd" && i+2 < len(args) {
					mask = args[i+2:]
					break
				}
			}
		}
		spans = append(spans, mask...)
	}
	return spans
}

// cmdWords appends to words (empty, its capacity the most words read:
// a caller's array, so no allocation) the words of the command at
// s[from:] (each word's start and end, its quotes included: 'a b' is one
// word), up to ; & | a line break or the text's end, and returns them and
// where the reading stopped.
func cmdWords(s string, from int, words [][2]int) ([][2]int, int) {
	i := from
	for len(words) < cap(words) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) || strings.IndexByte(";&|\r\n", s[i]) >= 0 {
			break
		}
		start := i
		for i < len(s) && !isBlank(s[i]) && strings.IndexByte(";&|", s[i]) < 0 {
			if q := s[i]; q == '"' || q == '\'' {
				if j := strings.IndexByte(s[i+1:], q); j >= 0 {
					i += j + 2
					continue
				}
			}
			i++
		}
		words = append(words, [2]int{start, i})
	}
	return words, i
}

// echoedSpans adds secretEchoed's password to spans, unless it is a
// variable's value ($P, "${P}"): that is no secret as written.
func echoedSpans(s string, spans [][2]int) [][2]int {
	for _, m := range secretEchoed.FindAllStringSubmatchIndex(s, -1) {
		if v := strings.Trim(s[m[2]:m[3]], `"'`); !strings.HasPrefix(v, "$") {
			spans = append(spans, [2]int{m[2], m[3]})
		}
	}
	return spans
}

// chpasswdSpans adds secretChpasswd's password (its first or second
// group) to spans.
func chpasswdSpans(s string, spans [][2]int) [][2]int {
	for _, m := range secretChpasswd.FindAllStringSubmatchIndex(s, -1) {
		for g := 2; g <= 4; g += 2 {
			if m[g] >= 0 {
				spans = append(spans, [2]int{m[g], m[g+1]})
			}
		}
	}
	return spans
}

// toolFlags are the tools whose flags (flags) take a password, masked in
// every command that starts with one of tools (at a command's start when
// start is set: http is a word of too many texts), when one of its first
// three arguments is one of sub (if set). A flag is matched as a whole word (-p VALUE),
// or with its value attached when it ends in "+" (7z's -pVALUE; -p
// alone prompts) or ":" (xfreerdp's /p:VALUE), or both and as the last of
// short flags written together when it ends in "*" (curl's -u VALUE,
// -uVALUE, -sSfu VALUE), or as --flag=VALUE. With
// split set, the value is USER<split>PASSWORD and only what follows the
// first split is masked (nothing when there is none).
var toolFlags = []struct {
	tools, flags []string
	split        byte
	start        bool
	sub          []string
}{
	{tools: []string{"mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop", "mongofiles"}, flags: []string{"-p"}},
	{tools: []string{"twine", "rdesktop", "psexec", "psexec64", "nuget", "cqlsh", "snowsql", "cypher-shell", "rabbitmqadmin"}, flags: []string{"-p"}},
	{tools: []string{"curl"}, flags: []string{"-u*", "-U*", "--proxy-user", "-E", "--cert", "--proxy-cert"}, split: ':'},
	{tools: []string{"kubectl", "oc"}, flags: []string{"--from-literal"}, split: '=', sub: []string{"secret"}},
	{tools: []string{"ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldapcompare", "ldapmodrdn", "ldapexop", "ldapurl"}, flags: []string{"-w"}},
	{tools: []string{"ldappasswd"}, flags: []string{"-w", "-a", "-s"}},
	{tools: []string{"keytool", "jarsigner"}, flags: []string{"-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass", "-new"}},
	{tools: []string{"zip", "unzip", "zipcloak"}, flags: []string{"-P"}},
	{tools: []string{"7z", "7za", "7zr", "7zz", "rar", "unrar"}, flags: []string{"-p+"}},
	{tools: []string{"smbclient", "rpcclient", "smbcacls", "smbget", "smbmap", "mount.cifs"}, flags: []string{"-U", "--user"}, split: '%'},
	{tools: []string{"lftp"}, flags: []string{"-u"}, split: ','},
	{tools: []string{"openssl"}, flags: []string{"-k"}},
	{tools: []string{"ssh-keygen"}, flags: []string{"-N", "-P"}},
	{tools: []string{"xfreerdp", "xfreerdp3", "wfreerdp", "sdl-freerdp"}, flags: []string{"/p:", "/password:"}},
	{tools: []string{"plink", "pscp", "psftp"}, flags: []string{"-pw"}},
	{tools: []string{"schtasks", "schtasks.exe"}, flags: []string{"/RP", "/rp"}},
	{tools: []string{"gh"}, flags: []string{"--body", "-b"}, sub: []string{"secret"}},
	{tools: []string{"az"}, flags: []string{"--value"}, sub: []string{"secret"}},
	{tools: []string{"aws"}, flags: []string{"--value"}, sub: []string{"put-parameter"}},
	{tools: []string{"security"}, flags: []string{"-w"}, sub: []string{"add-generic-password", "add-internet-password"}},
	{tools: []string{"doctl"}, flags: []string{"-t"}},
	{tools: []string{"http", "https", "xh", "xhs"}, flags: []string{"-a"}, split: ':', start: true},
}

// toolFlagHints are hints for toolFlags' tools (each name holds one);
// toolByName is the entries of toolFlags by tool name.
var toolFlagHints, toolByName = func() ([]string, map[string]int) {
	hints := []string{"mongo", "twine", "rdesktop", "psexec", "nuget", "ldap", "keytool", "jarsigner",
		"zip", "7z", "rar", "smb", "rpcclient", "cifs", "lftp", "openssl", "ssh-keygen", "freerdp",
		"gh", "doctl", "http", "xh", "cqlsh", "snowsql", "cypher-shell", "rabbitmqadmin", "curl", "kubectl", "oc", "plink", "pscp", "psftp", "schtasks", "az", "aws", "security"}
	byName := map[string]int{}
	for i, t := range toolFlags {
		for _, n := range t.tools {
			if !slices.ContainsFunc(hints, func(h string) bool { return strings.Contains(n, h) }) {
				panic("secrets: no hint for the tool " + n)
			}
			if _, dup := byName[n]; dup || len(n) > maxToolName {
				panic("secrets: a tool twice in toolFlags, or a long name: " + n)
			}
			byName[n] = i
		}
	}
	return hints, byName
}()

// maxToolName is the longest name in toolFlags.
const maxToolName = 13

// toolFlagSpans adds to spans the values of toolFlags' password flags,
// in each command named by one of their tools (a word at a text's start,
// after a blank, one of ; & | ( or a quote, or after a path's '/', and
// before a blank or the text's end), reading the command's words
// (cmdWords, at most 64); the search goes on after them: linear. Words
// are looked up by name: no regular expression over the whole text.
func toolFlagSpans(s string, spans [][2]int) [][2]int {
	for pos := 0; pos < len(s); pos++ {
		if pos > 0 && !isBlank(s[pos-1]) && strings.IndexByte(";&|(/\"'`", s[pos-1]) < 0 {
			continue
		}
		n := 0
		for n < maxToolName && pos+n < len(s) && !isBlank(s[pos+n]) {
			n++
		}
		if pos+n < len(s) && !isBlank(s[pos+n]) {
			continue
		}
		ti, ok := toolByName[s[pos:pos+n]]
		if !ok {
			continue
		}
		at := pos
		var buf [64][2]int
		words, end := cmdWords(s, pos+n, buf[:0])
		pos = max(end, pos+n) - 1
		for _, t := range toolFlags[ti : ti+1] {
			if t.start && !commandStart(s[:at]) || t.sub != nil && !subcommand(s, words, t.sub) {
				continue
			}
			for i, w := range words {
				word := s[w[0]:w[1]]
				val := [2]int{-1, -1}
				for _, f := range t.flags {
					switch {
					case strings.HasSuffix(f, "*"):
						// -u VALUE, -uVALUE, -sSfu VALUE.
						f = strings.TrimSuffix(f, "*")
						switch {
						case word == f && i+1 < len(words):
							val = words[i+1]
						case len(word) > len(f) && strings.HasPrefix(word, f):
							val = [2]int{w[0] + len(f), w[1]}
						case len(word) > 2 && word[0] == '-' && word[len(word)-1] == f[1] && tokenRun(word[1:]) == len(word)-1 &&
							!strings.Contains(word[1:], "-") && i+1 < len(words):
							val = words[i+1]
						}
					case strings.HasSuffix(f, "+") || strings.HasSuffix(f, ":"):
						f = strings.TrimSuffix(f, "+")
						if len(word) > len(f) && strings.HasPrefix(word, f) {
							val = [2]int{w[0] + len(f), w[1]}
						}
					case word == f && i+1 < len(words):
						val = words[i+1]
					case strings.HasPrefix(f, "--") && strings.HasPrefix(word, f+"="):
						val = [2]int{w[0] + len(f) + 1, w[1]}
					}
				}
				if val[0] < 0 {
					continue
				}
				// Inside the value's quotes, if it has them.
				if v := s[val[0]:val[1]]; len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
					val = [2]int{val[0] + 1, val[1] - 1}
				}
				if t.split != 0 {
					j := strings.IndexByte(s[val[0]:val[1]], t.split)
					if j < 0 {
						continue
					}
					val[0] += j + 1
				}
				if val[0] < val[1] {
					spans = append(spans, val)
				}
			}
		}
	}
	return spans
}

// subcommand: one of sub is one of the first three of words (kubectl
// create secret, gh secret set, aws ssm put-parameter).
func subcommand(s string, words [][2]int, sub []string) bool {
	for _, w := range words[:min(3, len(words))] {
		if slices.Contains(sub, s[w[0]:w[1]]) {
			return true
		}
	}
	return false
}

// commandStart: before, the text before a word, ends where a command
// starts: the text's start, a line break, ; & | or (, then blanks, or
// sudo and blanks.
func commandStart(before string) bool {
	before = strings.TrimRight(before, " \t")
	if b, ok := strings.CutSuffix(before, "sudo"); ok && (b == "" || isBlank(b[len(b)-1])) {
		before = strings.TrimRight(b, " \t")
	}
	return before == "" || strings.IndexByte("\n\r;&|(", before[len(before)-1]) >= 0
}
