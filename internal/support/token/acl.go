package token

import "fmt"

// The key file check on Windows (owner_windows.go) reads the file's owner
// and access list and decides with judgeACL, which is pure so that the
// decision is tested on any OS.

// Well-known SIDs that may own or reach the key file: the machine's own
// account and the administrators, who can take any file anyway.
const (
	sidSystem         = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
)

// aceEntry is one entry of a file's access list.
type aceEntry struct {
	Deny bool
	Mask uint32
	SID  string
}

// Access rights that let a holder read the key (and forge tokens) or
// replace it, including through the generic rights and by changing the
// access list or the owner.
const riskyRights = 0x1 | 0x2 | 0x4 | // FILE_READ_DATA, FILE_WRITE_DATA, FILE_APPEND_DATA
	0x10000 | 0x40000 | 0x80000 | // DELETE, WRITE_DAC, WRITE_OWNER
	0x10000000 | 0x20000000 | 0x40000000 | 0x80000000 // GENERIC_ALL, _EXECUTE, _WRITE, _READ

// judgeACL refuses a key file owned by someone other than the user (or
// SYSTEM, or the administrators), one with no access list at all (which
// grants everyone everything), and one that allows any other account to
// read or replace it. Deny entries only take rights away and are ignored;
// every other entry type is treated as an allow entry, so an entry this
// check does not know can only make it refuse.
func judgeACL(userSID, ownerSID string, nullDACL bool, aces []aceEntry) error {
	trusted := func(sid string) bool {
		return sid == userSID || sid == sidSystem || sid == sidAdministrators
	}
	const fix = "remove the file and restart clawd to generate a new key"
	if !trusted(ownerSID) {
		return fmt.Errorf("owned by %s, not by this user (%s); %s", ownerSID, userSID, fix)
	}
	if nullDACL {
		return fmt.Errorf("it has no access list, which lets every user read it and forge tokens; %s", fix)
	}
	for _, a := range aces {
		if !a.Deny && !trusted(a.SID) && a.Mask&riskyRights != 0 {
			return fmt.Errorf("its access list lets %s read or replace it (rights %#x), and with it forge tokens; %s", a.SID, a.Mask, fix)
		}
	}
	return nil
}
