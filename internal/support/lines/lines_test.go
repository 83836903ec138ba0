package lines

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestRead: CRLF and LF end a line; a line over max is consumed without
// being kept and the next line is read; the last line without a newline
// comes with io.EOF; a line of exactly max passes with either ending.
func TestRead(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // bigger than the 64 KiB buffer below
	in := "a\r\nbb\n" + long + "\n" + "cccc\n" + "dddd\r\n" + "eeeee\n" + "last"
	br := bufio.NewReaderSize(strings.NewReader(in), 64<<10)
	want := []struct {
		line    string
		tooLong bool
	}{{"a", false}, {"bb", false}, {"", true}, {"cccc", false}, {"dddd", false}, {"", true}, {"last", false}}
	for i, w := range want {
		line, tooLong, err := Read(br, 4, nil)
		if string(line) != w.line || tooLong != w.tooLong {
			t.Fatalf("line %d: %q tooLong=%v err=%v, want %q tooLong=%v", i, line, tooLong, err, w.line, w.tooLong)
		}
		if (i == len(want)-1) != (err == io.EOF) {
			t.Fatalf("line %d: err %v", i, err)
		}
	}
}
