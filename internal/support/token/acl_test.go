package token

import (
	"strings"
	"testing"
)

// The Windows key file decision: what clawd creates passes; another owner,
// no access list, or any other account able to read or replace the key is
// refused; deny entries and trusted system accounts change nothing.
func TestJudgeACL(t *testing.T) {
	const (
		me    = "S-1-5-21-1-2-3-1001"
		other = "S-1-5-21-1-2-3-1002"
		every = "S-1-1-0"
		users = "S-1-5-32-545"
	)
	full := uint32(0x1f01ff) // FILE_ALL_ACCESS
	for _, tc := range []struct {
		name    string
		owner   string
		null    bool
		aces    []aceEntry
		wantErr string
	}{
		{name: "as clawd creates it", owner: me, aces: []aceEntry{{Mask: full, SID: me}}},
		{name: "inherited from a user profile", owner: me, aces: []aceEntry{{Mask: full, SID: sidSystem}, {Mask: full, SID: sidAdministrators}, {Mask: full, SID: me}}},
		{name: "owned by the administrators (elevated creator)", owner: sidAdministrators, aces: []aceEntry{{Mask: full, SID: me}}},
		{name: "owned by another user", owner: other, aces: []aceEntry{{Mask: full, SID: me}}, wantErr: "owned by " + other},
		{name: "no access list", owner: me, null: true, wantErr: "no access list"},
		{name: "empty access list (nobody but the owner's implicit rights)", owner: me},
		{name: "Users may read", owner: me, aces: []aceEntry{{Mask: full, SID: me}, {Mask: 0x120089, SID: users}}, wantErr: users},
		{name: "Everyone GENERIC_READ", owner: me, aces: []aceEntry{{Mask: 0x80000000, SID: every}}, wantErr: every},
		{name: "another user may change the access list", owner: me, aces: []aceEntry{{Mask: 0x40000, SID: other}}, wantErr: other},
		{name: "another user may only read attributes", owner: me, aces: []aceEntry{{Mask: 0x80 | 0x100000, SID: other}}},
		{name: "deny entries are fine", owner: me, aces: []aceEntry{{Deny: true, Mask: full, SID: every}, {Mask: full, SID: me}}},
		{name: "unknown entry type", owner: me, aces: []aceEntry{{Mask: full, SID: "an entry of type 5"}}, wantErr: "type 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := judgeACL(me, tc.owner, tc.null, tc.aces)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "restart clawd") {
				t.Fatalf("got %v, want an error naming %q and the fix", err, tc.wantErr)
			}
		})
	}
}
