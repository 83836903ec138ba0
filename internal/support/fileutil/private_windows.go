package fileutil

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// MakePrivate sets path's access list to privateSDDL: full control for the
// user clawd runs as, nothing for anyone else (administrators can still take
// ownership, as with any file on Windows). It fails rather than leave the
// file readable by others.
func MakePrivate(path string, dir bool) error {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("making %s private: reading this process's user: %w", path, err)
	}
	sd, err := windows.SecurityDescriptorFromString(privateSDDL(user.User.Sid.String(), dir))
	if err != nil {
		return fmt.Errorf("making %s private: %w", path, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("making %s private: %w", path, err)
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION,
		nil, nil, dacl, nil); err != nil {
		return fmt.Errorf("making %s readable by this user only: %w", path, err)
	}
	return nil
}
