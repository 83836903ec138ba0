package hostadapter

import (
	"os"
	"strings"
)

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// shellJoin quotes words for a POSIX shell command line (headersHelper
// and hook commands are run by a shell).
func shellJoin(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
			q[i] = w
			continue
		}
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
