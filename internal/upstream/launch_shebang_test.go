//go:build unix

package upstream

import (
	"testing"
)

// Runtimes named with their version (Debian's ruby3.1, php8.2, perl5.36.0,
// a node22 link) take their runtime's rules.
func TestVersionedRuntimeNames(t *testing.T) {
	for name, want := range map[string]string{
		"ruby3.1": "ruby", "php8.2": "php", "perl5.36.0": "perl", "node22": "node", "nodejs18": "node",
		"python3.11": "python", "pypy3": "python", "lua5.4": "lua", "luajit2.1": "lua",
		"ruby": "ruby", "node": "node", "rubyx": "", "phpunit": "", "node-gyp": "", "perldoc": "",
	} {
		if got := launcherKind(name); got != want {
			t.Errorf("launcherKind(%q) = %q; want %q", name, got, want)
		}
	}
	work := envTestSetup(t, "ruby3.1", "php8.2", "node22", "perl5.36.0")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"ruby3.1", "-r/tmp/evil", "x.rb"}, unpinned: "-r"},
		{cmd: []string{"ruby3.1", "x.rb"}, script: "x.rb"},
		{cmd: []string{"php8.2", "-d", "auto_prepend_file=/tmp/e.php", "x.php"}, unpinned: "-d"},
		{cmd: []string{"php8.2", "x.php"}, script: "x.php"},
		{cmd: []string{"node22", "-r", "/tmp/e.js", "x.js"}, unpinned: "`-r`"},
		{cmd: []string{"node22", "x.js"}, env: envOf("NODE_OPTIONS", "--require /tmp/e.js"), unpinned: "NODE_OPTIONS"},
		{cmd: []string{"perl5.36.0", "-MEvil", "x.pl"}, unpinned: "-MEvil"},
		{cmd: []string{"perl5.36.0", "x.pl"}, script: "x.pl"},
	})
}
