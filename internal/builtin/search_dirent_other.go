//go:build !linux

package builtin

import "os"

// readDirEntries lists the directory f with (*os.File).ReadDir.
func readDirEntries(f *os.File, root *os.Root, buf []byte) ([]dirEntry, error) {
	ents, err := f.ReadDir(-1)
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirEntry{name: e.Name(), typ: e.Type()})
	}
	return out, err
}
