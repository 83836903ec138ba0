package secrets

import (
	"slices"
	"strings"
)

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
// toolByName is the entries of toolFlags by tool name. Building them
// panics on a tool name no hint finds, one listed twice or one longer
// than maxToolName: a mistake in the static toolFlags table, hit by every
// test of the package at load, never by input.
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
