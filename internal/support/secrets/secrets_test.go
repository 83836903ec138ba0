package secrets

import (
	"slices"
	"strings"
	"testing"
)

func TestIsClawdVar(t *testing.T) {
	for name, want := range map[string]bool{
		"CLAWDE_SESSION_SECRET": true,
		"CLAWD_TOKEN":           true,
		"clawd_token":           true,
		"Clawde_Mcp_Socket":     true,
		"CLAWD_INTERNAL_ENV_FD": true,
		"CLAWD_":                true,
		"CLAWD":                 false,
		"CLAWDEX_KEEP":          false,
		"MY_CLAWD_NOTE":         false,
		"PATH":                  false,
		"":                      false,
	} {
		if got := IsClawdVar(name); got != want {
			t.Errorf("IsClawdVar(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestScrubEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"CLAWDE_SESSION_SECRET=s3cret",
		"HOME=/home/u",
		"clawd_token=tok",
		"CLAWD_TOKEN=a=b=c",
		"PWD=/old",
		"CLAWDEX_KEEP=1",
		"MY_CLAWD_NOTE=2",
		"CLAWD_NOEQUALS",
		"pwd=lower is another variable on unix",
	}
	got := ScrubEnv(env, "PWD")
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "CLAWDEX_KEEP=1", "MY_CLAWD_NOTE=2", "pwd=lower is another variable on unix"}
	if !slices.Equal(got, want) {
		t.Errorf("ScrubEnv = %q\nwant      %q", got, want)
	}
	if env[1] != "CLAWDE_SESSION_SECRET=s3cret" {
		t.Error("ScrubEnv changed its input")
	}
	if got := ScrubEnv(nil); len(got) != 0 {
		t.Errorf("ScrubEnv(nil) = %q", got)
	}
}

func TestMaskValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"x", "****"},
		{"hunter2", "****"},
		{"0123456789012345678", "****"},                       // 19: too short to show any of it
		{"01234567890123456789", "012****6789"},               // 20: 13 stay hidden
		{"sk-proj-abcdefghijklmnopwxyz", "sk-****wxyz"},       // the usual look of an API key
		{"ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123", "ghp****0123"}, // a GitHub token
		{"ééééééééééééééééééééé", "ééé****éééé"}, // characters, not bytes
	}
	for _, tt := range tests {
		got := MaskValue(tt.in)
		if got != tt.want {
			t.Errorf("MaskValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// Whatever is shown, at least 13 characters of the value are not.
		if len(tt.in) > 0 {
			shown := strings.Count(got, "") - 1 - len([]rune(Masked))
			if hidden := len([]rune(tt.in)) - shown; hidden < 13 && got != Masked {
				t.Errorf("MaskValue(%q) shows all but %d characters", tt.in, hidden)
			}
		}
	}
}

func TestMaskText(t *testing.T) {
	tests := []struct{ in, want, never string }{
		{"src/main.go", "src/main.go", ""},
		{"go test ./... -run TestX", "go test ./... -run TestX", ""},
		{"curl -H 'Authorization: Bearer abcdef123456' https://x", "Authorization: ***' https://x", "abcdef123456"},
		{"http get x 'bearer abcdef123456'", "bearer ***'", "abcdef123456"},
		{"curl -H 'X: Basic dXNlcjpwYXNz'", "Basic ***", "dXNlcjpwYXNz"},
		{"API_KEY=sk-live-1234abcd5678 ./deploy", "API_KEY=*** ./deploy", "sk-live"},
		{"export GITHUB_TOKEN='ghp x y'; ls", "GITHUB_TOKEN=***; ls", "ghp"},
		{`db_password: "two words"`, "db_password: ***", "two words"},
		{"mysql --password hunter2 db", "--password *** db", "hunter2"},
		{"git clone https://bob:pa55word@example.com/r.git", "https://bob:***@example.com/r.git", "pa55word"},
		{"echo 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "echo ***", "9f86d081"},
		// A digest named as such is shown: clawd's allowlist hints must be copyable.
		{"(sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08) x", "(sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08) x", "***"},
		{"clawd mcp allow --sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "--sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "***"},
		// ...but not a digest-shaped run after another word, nor a longer run.
		{"id 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "id ***", "9f86d081"},
		{"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08ff", "sha256 ***", "9f86d081"},
		// Long words that do not look random stay.
		{"ls /usr/local/lib/python3.12/site-packages/some_module_name", "/usr/local/lib/python3.12/site-packages/some_module_name", "***"},
		{"echo abcdefghijklmnopqrstuvwxyzabcdefgh", "abcdefghijklmnopqrstuvwxyzabcdefgh", "***"},
		// A secret-looking name quoted as a JSON, YAML or Python key.
		{`curl -d '{"password":"hunter2xyz"}' https://x`, `{"password":***}`, "hunter2xyz"},
		{`curl -d '{"api_key": "hunter2 xyz"}' https://x`, `{"api_key": ***}`, "hunter2"},
		{`python -c "f({'client_secret': 'hunter2xyz'})"`, `'client_secret': ***`, "hunter2xyz"},
		// A URL password without a user name (redis://:pw@host).
		{"redis-cli -u redis://:hunter2xyz@localhost:6379", "redis://:***@localhost:6379", "hunter2xyz"},
		// Authorization with a scheme other than Bearer or Basic (GitHub's token).
		{"curl -H 'Authorization: token hunter2xyz' https://x", "Authorization: ***' https://x", "hunter2xyz"},
		{"curl -H 'Authorization: Token hunter2xyz' https://x", "***' https://x", "hunter2xyz"},
		// curl's (and wget's, httpie's) -u/--user USER:PASSWORD.
		{"curl -u admin:hunter2xyz https://x", "curl -u admin:*** https://x", "hunter2xyz"},
		{"curl --user=admin:hunter2xyz https://x", "--user=admin:*** https://x", "hunter2xyz"},
		{"curl -uadmin:hunter2xyz https://x", "-uadmin:*** https://x", "hunter2xyz"},
		{"git push -u origin main", "git push -u origin main", "***"},
		// Any Authorization scheme (ApiKey, SSWS, ...): the header's whole value.
		{`curl -H "Authorization: ApiKey hunter2xyz" x`, `"Authorization: ***" x`, "hunter2xyz"},
		{`curl -H 'Proxy-Authorization: SSWS hunter2xyz' x`, `'Proxy-Authorization: ***' x`, "hunter2xyz"},
		// gpg's --passphrase, openssl's pass:PASSWORD.
		{"gpg --batch --passphrase hunter2xyz -c f", "--passphrase *** -c f", "hunter2xyz"},
		{"openssl enc -aes256 -pass pass:hunter2xyz -in f", "-pass pass:*** -in f", "hunter2xyz"},
		// mysql's -p with a separate word prompts; the word is a database.
		{"mysql -p hunter2", "mysql -p hunter2", "***"},
	}
	for _, tt := range tests {
		got := MaskText(tt.in)
		if !strings.Contains(got, tt.want) || (tt.never != "" && strings.Contains(got, tt.never)) {
			t.Errorf("MaskText(%q) = %q, want %q without %q", tt.in, got, tt.want, tt.never)
		}
	}
}

// TestMaskTextGaps: secrets that an innocent-looking flag, a header other
// than Authorization, or a cookie carries.
func TestMaskTextGaps(t *testing.T) {
	tests := []struct{ in, want, never string }{
		// A password attached to mysql's (mysqldump's, mariadb's) -p.
		{"mysql -uroot -phunter2xyz app", "mysql -uroot -p*** app", "hunter2xyz"},
		{"mysqldump -h db -u root -p'hunter 2' app > d.sql", "-p*** app > d.sql", "hunter"},
		{"mariadb -u root -phunter2xyz", "mariadb -u root -p***", "hunter2xyz"},
		{"/usr/bin/mysqladmin -P 3306 -phunter2xyz status", "-P 3306 -p*** status", "hunter2xyz"},
		{"mysql --password=hunter2xyz app", "--password=*** app", "hunter2xyz"},
		// Registry logins, sshpass, redis-cli.
		{"docker login -u bob -p hunter2xyz registry.example.com", "-p *** registry.example.com", "hunter2xyz"},
		{"docker login -u bob --password hunter2xyz r", "--password *** r", "hunter2xyz"},
		{"docker login -u bob --password=hunter2xyz r", "--password=*** r", "hunter2xyz"},
		{"podman login -phunter2xyz quay.io", "-p*** quay.io", "hunter2xyz"},
		{"helm registry login r.example.com -u bob -p hunter2xyz", "-p ***", "hunter2xyz"},
		{"oras login -u bob -p hunter2xyz r", "-p *** r", "hunter2xyz"},
		{"sshpass -p hunter2xyz ssh -p 2222 host", "sshpass -p *** ssh -p 2222 host", "hunter2xyz"},
		{"sshpass -phunter2xyz scp f host:", "sshpass -p*** scp", "hunter2xyz"},
		{"redis-cli -h cache -a hunter2xyz ping", "-a *** ping", "hunter2xyz"},
		{"redis-cli --pass hunter2xyz ping", "--pass *** ping", "hunter2xyz"},
		// Generic secret flags.
		{"tool --token hunter2xyz run", "--token *** run", "hunter2xyz"},
		{"tool --token=hunter2xyz run", "--token=*** run", "hunter2xyz"},
		{"tool --api-key hunter2xyz run", "--api-key *** run", "hunter2xyz"},
		{"tool --client-secret hunter2xyz run", "--client-secret *** run", "hunter2xyz"},
		{"tool --secret hunter2xyz run", "--secret *** run", "hunter2xyz"},
		// Headers that carry credentials, and curl's cookies.
		{"curl -H 'Cookie: session=hunter2xyz; theme=dark' https://x", "'Cookie: ***' https://x", "hunter2xyz"},
		{"Set-Cookie: session=hunter2xyz; Path=/; HttpOnly", "Set-Cookie: ***", "hunter2xyz"},
		{"curl -H 'X-Api-Key: hunter2xyz' https://x", "'X-Api-Key: ***' https://x", "hunter2xyz"},
		{`curl -H "X-Auth-Token: hunter2xyz" https://x`, `"X-Auth-Token: ***" https://x`, "hunter2xyz"},
		{"curl -H 'Proxy-Authorization: Basic hunter2xyz' https://x", "'Proxy-Authorization: ***' https://x", "hunter2xyz"},
		{"curl -b 'session=hunter2xyz' https://x", "curl -b *** https://x", "hunter2xyz"},
		{"curl --cookie session=hunter2xyz https://x", "--cookie *** https://x", "hunter2xyz"},
		{"curl --cookie=session=hunter2xyz https://x", "--cookie=*** https://x", "hunter2xyz"},
		// A flag after a secret-looking boolean flag is not its value.
		{"echo $P | docker login --password-stdin -u bob r", "--password-stdin -u bob r", "***"},
		{"tool --no-auth --password hunter2xyz", "--no-auth --password ***", "hunter2xyz"},
		{"tool --password=-hunter2xyz", "--password=***", "hunter2xyz"},
		// A value that is itself a secret-looking word is not a name
		// whose value is the next word: the text after it stays.
		{"the command true --token=mytoken was not started", "--token=*** was not started", "mytoken"},
		{"the command true --token=secret was not started", "--token=*** was not started", ""},
		{"the command true --token=$GH_TOKEN was not started", "--token=*** was not started", "GH_TOKEN"},
		{"tool --token mytoken run", "--token *** run", "mytoken"},
		// ... but one that is a name given a value is read as one.
		{"token DB_PASSWORD: hunter2xyz", "token *** ***", "hunter2xyz"},
		{"token=DB_PASSWORD=hunter2xyz", "***", "hunter2xyz"},
		{"# refresh the token\ntoken hunter2xyz", "\n*** ***", "hunter2xyz"},
		{"pwd=--password hunter2xyz", "pwd=*** ***", "hunter2xyz"},
		{"token token hunter2xyz", "token *** ***", "hunter2xyz"},
		// Prose: a linking verb is not the value, the word after it is.
		{"The password is hunter2xyz.", "The password is ***", "hunter2xyz"},
		{"the admin password was 'hunter2 xyz' until today", "password was *** until today", "hunter2"},
		{"DB password IS hunter2xyz", "password IS ***", "hunter2xyz"},
		{"the api_key is", "the api_key ***", ""},
		{"the password is -hunter2xyz", "password is ***", "hunter2xyz"},
		// A flag's value is the next word, whatever it is.
		{"tool --password is hunter2xyz", "--password *** hunter2xyz", ""},
		// Environment assignments.
		{"PGPASSWORD=hunter2xyz psql -h db", "PGPASSWORD=*** psql -h db", "hunter2xyz"},
		{"export AWS_SECRET_ACCESS_KEY=hunter2xyz", "AWS_SECRET_ACCESS_KEY=***", "hunter2xyz"},
		{"GITHUB_TOKEN=hunter2xyz gh pr list", "GITHUB_TOKEN=*** gh", "hunter2xyz"},
		{"MY_TOKEN=a MY_SECRET=b MY_PASSWORD=c MY_API_KEY=d run", "MY_TOKEN=*** MY_SECRET=*** MY_PASSWORD=*** MY_API_KEY=*** run", ""},
		{"OPENAI_KEY=hunter2xyz python app.py", "OPENAI_KEY=*** python", "hunter2xyz"},
		{"SMTP_PASS=hunter2xyz ./send", "SMTP_PASS=*** ./send", "hunter2xyz"},
		// Long tokens in standard base64 (with '/' and '+'), however long.
		{"echo wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "echo ***", "wJalrXUtnFEMI"},
		{"echo " + longB64, "echo ***", longB64[:20]},
	}
	for _, tt := range tests {
		got := MaskText(tt.in)
		if !strings.Contains(got, tt.want) || (tt.never != "" && strings.Contains(got, tt.never)) {
			t.Errorf("MaskText(%q)\n = %q\nwant %q without %q", tt.in, got, tt.want, tt.never)
		}
	}
}

// longB64 is 300 characters of standard base64 (the shape of a long
// service-account token or key blob).
var longB64 = strings.Repeat("k7M/DENG+bPxRf1CYq9Zr2w/", 12) + "AbC3dE5fGh7Ij9KlMn0pQrSt1uVw3xYz5A7bC9dE1fG3hI5jK7lM9nO1pQ3rS5tU7vW9xY+z/A1bC3dE5fG7hI9jK=="

// TestMaskTextKeepsOrdinaryText: flags that look like the masked ones but
// belong to other tools, and paths, stay as they are.
func TestMaskTextKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"grep -p foo file",
		"ls -la",
		"python -m http.server -p 8080",
		"ssh -p 2222 host",
		"docker run -p 8080:80 nginx",
		"kubectl port-forward -p pod 8080",
		"mysql -p app",
		"mysql -h db -P 3306 -u root -p",
		"redis-cli -h cache ping",
		"curl -b cookies.txt https://x",
		"git checkout -b feature/x",
		"ls backups/2024/12/04/backup-20241204T120000Z/db",
		"cat internal/support/secrets/mask_test.go",
		"echo the cookie jar is empty",
	} {
		if got := MaskText(s); got != s {
			t.Errorf("MaskText(%q) = %q, want it unchanged", s, got)
		}
	}
}

// The -u/--user and user:password@ rules run with the others, on the text
// as it was, and the header rule's hints are the words its names hold
// (auth, cookie, key, token, secret) instead of any "x-": the masks are
// those of running every rule over the whole text.
func TestMaskTextMergedAndNarrowedRules(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		// Header names with and without a hint of their own.
		{"curl -H 'X-Api-Key: v1' x", "curl -H 'X-Api-Key: ***' x"},
		{"curl -H 'x-goog-api-key: v1' x", "curl -H 'x-goog-api-key: ***' x"},
		{"curl -H 'X-Auth-Token: v1' x", "curl -H 'X-Auth-Token: ***' x"},
		{"curl -H 'X-Vault-Token:v1' x", "curl -H 'X-Vault-Token:***' x"},
		{"curl -H 'X-Client-Secret: v 1' x", "curl -H 'X-Client-Secret: ***' x"},
		{"curl -H 'X-Authz: v1' x", "curl -H 'X-Authz: ***' x"},
		{"curl -H 'X-KEYRING-ID: v1' x", "curl -H 'X-KEYRING-ID: ***' x"},
		{"curl -H 'Cookie: a=b' -H 'Set-Cookie: c=d' x", "curl -H 'Cookie: ***' -H 'Set-Cookie: ***' x"},
		{"curl -H 'Proxy-Authorization: Digest v1' x", "curl -H 'Proxy-Authorization: ***' x"},
		// An x- word that is not a credential header stays.
		{"curl -H 'X-Request-Id: 42' x", "curl -H 'X-Request-Id: 42' x"},
		{"tar -xf go-linux-x-amd64.tar.gz", "tar -xf go-linux-x-amd64.tar.gz"},
		{"curl -H 'x-trace: key' x", "curl -H 'x-trace: key' x"},
		// -u/--user and user:password@, alone and together.
		{"curl -u bob:pw1 https://x", "curl -u bob:*** https://x"},
		{"curl --user 'bob:pw1' https://x", "curl --user 'bob:***' https://x"},
		{"curl -u bob https://x", "curl -u bob https://x"},
		{"redis-cli -u redis://:pw1@h:6379", "redis-cli -u redis://:***@h:6379"},
		{"curl -u a:b https://c:d@h/x -u e:f", "curl -u a:*** https://c:***@h/x -u e:***"},
		{"git clone https://bob:pw1@h/r.git", "git clone https://bob:***@h/r.git"},
		{"ssh bob@h:22; see https://h/x", "ssh bob@h:22; see https://h/x"},
		{"mail bob@h about https://h:8080/x", "mail bob@h about https://h:8080/x"},
		{"-U bob:pw1", "-U bob:pw1"},
		// Both rules next to another's mask.
		{"password=x -u bob:pw1", "password=*** -u bob:***"},
		{"token=x https://bob:pw1@h", "token=*** https://bob:***@h"},
		{"Bearer abc https://:pw1@h", "Bearer *** https://:***@h"},
	} {
		if got := MaskText(tt.in); got != tt.want {
			t.Errorf("MaskText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A rule's mask used to hide what the -u/--user and URL rules, which ran
// afterwards on the masked text, needed: "token -u" lost its -u to the
// token rule and the password after it was shown.
func TestMaskTextUserFlagSeesTheWholeText(t *testing.T) {
	checkHidden(t, "hunter2xyz",
		"token -u bob:hunter2xyz https://x",
		"secret: -u bob:hunter2xyz https://x",
		"basic --user bob:hunter2xyz https://x",
		"curl -u a:b://c:d;hunter2xyz@h")
}

// The rules that ignore case read K (U+212A) as k and ſ (U+017F) as s;
// the hints, compared byte by byte, did not, so "toKen=..." skipped the
// rule that would have masked it.
func TestMaskTextFoldedLetters(t *testing.T) {
	checkHidden(t, "hunter2xyz",
		"to\u212aen=hunter2xyz",
		"\u017fecret: hunter2xyz",
		"X-Api-\u212aey: hunter2xyz",
		"Bearer hunter2xyz \u017f")
}

// checkHidden: MaskText of each of ins does not show secret.
func checkHidden(t *testing.T, secret string, ins ...string) {
	t.Helper()
	for _, in := range ins {
		if out := MaskText(in); strings.Contains(out, secret) {
			t.Errorf("MaskText(%q) = %q", in, out)
		}
	}
}

// A prefixed token's rule masks to the end of the word it is in: a
// random-looking word that holds one (glpat-... then +..., an AWS key id
// then /...) was masked whole by the random-word rule, which looks only at
// what the other rules leave, and the part after the token, too short to
// look random on its own, must not come out.
func TestMaskTextPrefixedTokenTakesItsWord(t *testing.T) {
	for _, c := range []struct{ in, secret string }{
		{"glpat-CVN5PZWY0OXLC01Kp4WvqlsUe+5XdL9Rj5Oku7Q59GMVEHAAHON8OD", "5XdL9Rj5Oku7Q59GMVEHAAHON8OD"},
		{"echo ASIAR0ATWNQUCUR6W340/Q74FTJ9UJdZjTHvQlH", "Q74FTJ9UJdZjTHvQlH"},
		{"t=AKIA6NC88NGPG7ADRZ1Q-uKNEHWCZ0JFYD62LYKRwVjA x", "uKNEHWCZ0JFYD62LYKRwVjA"},
		{"jwt eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl+q8Zr2Lk9Xw", "q8Zr2Lk9Xw"},
		{"SG.abcdefghijklmnop.qrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz01", "wxyz01"},
	} {
		if out := MaskText(c.in); strings.Contains(out, c.secret) {
			t.Errorf("MaskText(%q) = %q: shows %q", c.in, out, c.secret)
		}
	}
}
