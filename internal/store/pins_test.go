package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testIntegrity = "sha512-5U3OZh8Xq0Li4nA26l6uNvV9/1suMDuWSn+NjLZIhzinhMY6N3A4DCrxVecBGPf2PsNFKTEv5krxGPRwzxc7jQ=="

// An approval is the executable's hash and its pins, written together and
// seen by another connection (a daemon) at once; disallowing all of a
// server's hashes removes its pins too.
func TestApprovePins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	cli, daemon := openTest(t, path), openTest(t, path)
	ctx := context.Background()
	exe, script := strings.Repeat("a", 64), strings.Repeat("b", 64)
	daemon.ScriptAllowed("js", script) // load a snapshot first: the approval must invalidate it
	added, err := cli.Approve(ctx, "js", exe, []PinRow{
		{Kind: PinScript, Digest: script, Detail: "/srv/x.js"},
		{Kind: PinPackage, Subject: "@scope/srv@1.2.3", Digest: testIntegrity},
	})
	if err != nil || !added {
		t.Fatalf("approve: %v %v", added, err)
	}
	time.Sleep(2 * FreshFor) // another connection re-reads the generation after FreshFor
	if ok, _ := daemon.ServerAllowed("js", exe); !ok {
		t.Error("executable not allowed")
	}
	if ok, _ := daemon.ScriptAllowed("js", script); !ok {
		t.Error("script pin not seen by another connection")
	}
	if ok, _ := daemon.PinAllowed("js", PinPackage, "@scope/srv@1.2.3", testIntegrity); !ok {
		t.Error("package pin not seen")
	}
	for _, c := range [][3]string{
		{"other", PinScript, ""},               // another server
		{"js", PinPackage, "@scope/srv@1.2.4"}, // another version
	} {
		d := script
		if c[1] == PinPackage {
			d = testIntegrity
		}
		if ok, _ := daemon.PinAllowed(c[0], c[1], c[2], d); ok {
			t.Errorf("%v allowed", c)
		}
	}
	// One read answers for the executable and every pin of a launch.
	execOK, pinned, err := daemon.LaunchAllowed("js", exe, []PinRow{
		{Kind: PinScript, Digest: script},
		{Kind: PinPackage, Subject: "@scope/srv@1.2.4", Digest: testIntegrity}, // not this version
		{Kind: PinPackage, Subject: "@scope/srv@1.2.3", Digest: testIntegrity},
	})
	if err != nil || !execOK || len(pinned) != 3 || !pinned[0] || pinned[1] || !pinned[2] {
		t.Errorf("LaunchAllowed = %v %v %v, want true [true false true]", execOK, pinned, err)
	}
	if execOK, _, _ := daemon.LaunchAllowed("other", exe, nil); execOK {
		t.Error("LaunchAllowed allowed the executable for another server")
	}
	if added, _ := cli.Approve(ctx, "js", exe, []PinRow{{Kind: PinScript, Digest: script}}); added {
		t.Error("approving the same again reported new entries")
	}
	pins, err := cli.Pins(ctx, "js")
	if err != nil || len(pins) != 2 || pins[1].Kind != PinScript || pins[1].Detail != "/srv/x.js" {
		t.Fatalf("pins %+v %v", pins, err)
	}
	n, err := cli.DisallowServer(ctx, "js", "")
	if err != nil || n != 3 {
		t.Fatalf("disallow removed %d, %v; want 3 (hash and two pins)", n, err)
	}
	time.Sleep(2 * FreshFor)
	if ok, _ := daemon.ScriptAllowed("js", script); ok {
		t.Error("script pin survived disallow")
	}
}

// Bad pins are refused with what is wrong, by Go and by the table.
func TestPinValidation(t *testing.T) {
	db := openTest(t, "")
	ctx := context.Background()
	exe := strings.Repeat("a", 64)
	for _, tc := range []struct {
		pin  PinRow
		want string
	}{
		{PinRow{Kind: "binary", Digest: exe}, "pin kind"},
		{PinRow{Kind: PinScript, Digest: "xyz"}, "64 hexadecimal"},
		{PinRow{Kind: PinScript, Subject: "x", Digest: exe}, "no subject"},
		{PinRow{Kind: PinPackage, Subject: "noversion", Digest: testIntegrity}, "NAME@VERSION"},
		{PinRow{Kind: PinPackage, Subject: "p@1.0.0", Digest: "md5-abc"}, "integrity"},
	} {
		if _, err := db.Approve(ctx, "js", exe, []PinRow{tc.pin}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want an error naming %q", tc.pin, err, tc.want)
		}
	}
	if ok, _ := db.ServerAllowed("js", exe); ok {
		t.Error("a refused approval stored the executable's hash")
	}
	// The table holds against another writer.
	if _, err := db.wdb.Exec(`INSERT INTO cd_mcp_server_pin (server_id, kind, subject, digest, added_at) VALUES ('js', 'script', '', 'nothex', 'x')`); err == nil {
		t.Error("the table took a script pin that is not a SHA-256")
	}
}
