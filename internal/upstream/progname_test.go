package upstream

import "testing"

// Windows drops the trailing dots and blanks of a path's last name and
// reads name:stream as the file's stream, so node.exe., "node.exe " and
// node.exe::$DATA all run node.exe: each is node's name, or the command
// would pass as a plain executable and its script go unpinned.
func TestProgNameOnWindowsAsWindowsReadsIt(t *testing.T) {
	for in, want := range map[string]string{
		"node.exe":        "node",
		"NODE.EXE":        "node",
		"node.exe.":       "node",
		"node.exe . .":    "node",
		"node.":           "node",
		"node.exe::$DATA": "node",
		"bash.exe:x":      "bash",
		"python3.12.exe":  "python3.12",
		"gradlew.bat.":    "gradlew",
	} {
		if got := progNameOn("windows", in); got != want {
			t.Errorf("progNameOn(windows, %q) = %q; want %q", in, got, want)
		}
	}
	// Elsewhere a dot or a colon is part of the name.
	for _, in := range []string{"node.", "node:x"} {
		if got := progNameOn("linux", in); got != in {
			t.Errorf("progNameOn(linux, %q) = %q", in, got)
		}
	}
}

// Debian's static builds of shells (bash-static, zsh-static,
// mksh-static) are those shells: their rules, not a plain executable's
// (which would leave the script they run unpinned).
func TestStaticShellsTakeTheirRules(t *testing.T) {
	for name, want := range map[string]string{"bash-static": "shell", "zsh-static": "shell", "mksh-static": "shell", "busybox-static": "wrapper", "node-gyp": "", "bash-completion": ""} {
		if got := launcherKind(name); got != want {
			t.Errorf("launcherKind(%q) = %q; want %q", name, got, want)
		}
	}
}
