package proc

import (
	"os"
	"strings"
)

// BootID identifies this boot of the machine (Linux; "" elsewhere). Start
// times count from it: a record of a pid and start time from another boot
// names no process.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
