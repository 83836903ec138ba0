package token

import (
	"fmt"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ACE types whose layout is that of ACCESS_ALLOWED_ACE (winnt.h).
const (
	aceTypeAllowedCallback = 9
	aceTypeDeniedCallback  = 10
)

// checkPrivate refuses a key file that another account can read or replace,
// or that another account owns (judgeACL), reading the file's owner and
// access list: on Windows a file's mode says only whether it is read-only.
// clawd creates the key with an access list for the current user only
// (fileutil.MakePrivate), which passes.
func checkPrivate(path string, _ fs.FileInfo) error {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading its access list: %w", err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("reading its owner: %w", err)
	}
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("reading this process's user: %w", err)
	}
	dacl, _, err := sd.DACL()
	if err != nil && err != windows.ERROR_OBJECT_NOT_FOUND {
		return fmt.Errorf("reading its access list: %w", err)
	}
	var aces []aceEntry
	if dacl != nil {
		for i := uint32(0); i < uint32(dacl.AceCount); i++ {
			var ace *windows.ACCESS_ALLOWED_ACE
			if err := windows.GetAce(dacl, i, &ace); err != nil {
				return fmt.Errorf("reading its access list: %w", err)
			}
			e := aceEntry{Mask: uint32(ace.Mask)}
			switch t := ace.Header.AceType; t {
			case windows.ACCESS_ALLOWED_ACE_TYPE, windows.ACCESS_DENIED_ACE_TYPE,
				aceTypeAllowedCallback, aceTypeDeniedCallback: // SID right after the mask
				e.Deny = t == windows.ACCESS_DENIED_ACE_TYPE || t == aceTypeDeniedCallback
				e.SID = (*windows.SID)(unsafe.Pointer(&ace.SidStart)).String()
			default: // object and other entries: judged as an allow for an unknown account
				e.SID = fmt.Sprintf("an entry of type %d", t)
			}
			aces = append(aces, e)
		}
	}
	return judgeACL(user.User.Sid.String(), owner.String(), dacl == nil, aces)
}
