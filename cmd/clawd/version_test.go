package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// TestVersionJSON: clawd version prints data, so it has --json like every
// other command that does; the text form is unchanged.
func TestVersionJSON(t *testing.T) {
	root := newRootCmd()
	root.SetArgs([]string{"version", "--json"})
	var out strings.Builder
	root.SetOut(&out)
	if code := reportError(&out, root.Execute()); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil || v["version"] == "" || v["go"] != runtime.Version() || v["os"] != runtime.GOOS {
		t.Fatalf("%v: %q", err, out.String())
	}
	root = newRootCmd()
	root.SetArgs([]string{"version"})
	out.Reset()
	root.SetOut(&out)
	if code := reportError(&out, root.Execute()); code != 0 || out.String() != "clawd "+versionString()+"\n" {
		t.Fatalf("exit %d: %q", code, out.String())
	}
}
