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

// TestReadEnds: a line too long keeps its first and last n bytes, whatever
// the buffer's size and wherever the line crosses it; a line that fits
// keeps none.
func TestReadEnds(t *testing.T) {
	for _, size := range []int{16, 100, 64 << 10} {
		for _, length := range []int{6, 7, 40, 200 << 10} {
			body := make([]byte, length)
			for i := range body {
				body[i] = 'a' + byte(i%26)
			}
			in := "ok\n" + string(body) + "\r\nafter\n"
			br := bufio.NewReaderSize(strings.NewReader(in), size)
			if line, tooLong, ends, _ := ReadEnds(br, 5, nil, 8); string(line) != "ok" || tooLong || ends.Head != nil || ends.Tail != nil {
				t.Fatalf("size %d: first line %q %v %+v", size, line, tooLong, ends)
			}
			_, tooLong, ends, _ := ReadEnds(br, 5, nil, 8)
			wantHead, wantTail := body[:min(8, length)], body[max(0, length-8):]
			if !tooLong || string(ends.Head) != string(wantHead) || string(ends.Tail) != string(wantTail) {
				t.Fatalf("size %d, length %d: tooLong %v, ends %q %q, want %q %q", size, length, tooLong, ends.Head, ends.Tail, wantHead, wantTail)
			}
			if line, _, _, _ := ReadEnds(br, 5, nil, 8); string(line) != "after" {
				t.Fatalf("size %d, length %d: next line %q", size, length, line)
			}
		}
	}
}
