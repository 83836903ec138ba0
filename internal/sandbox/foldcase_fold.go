//go:build darwin || windows

package sandbox

// foldCase: APFS, HFS+ and NTFS ignore case by default, so protected
// names are matched ignoring case too (on a case-sensitive volume this
// refuses a few more names than needed, never fewer).
const foldCase = true
