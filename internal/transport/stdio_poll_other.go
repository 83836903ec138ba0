//go:build !unix

package transport

import "os"

func pollableStdin() (*os.File, func()) { return os.Stdin, func() {} }
