package secrets

import (
	"regexp"
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
	// The one rule whose hints are not in every text its pattern matches:
	// a .pgpass line on another port (h:5434:db:u:pw) in a text that does
	// not name .pgpass is not read; a ':' alone would run it on most texts.
	{re: secretPgpass, start: 2, end: 3, hints: []string{"pgpass", ":*:", "5432:", "5433:", "6432:"}},
	{fn: echoedSpans, hints: []string{"echo", "printf", "yes"}, and: "|"},
	{re: secretHereString, start: 2, end: 3, hints: []string{"<<<"}},
	{fn: chpasswdSpans, hints: []string{"chpasswd"}},
}
