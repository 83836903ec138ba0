package lines

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
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

// cutReader hands out its input in small pieces and, between them, fails
// with errCut as a read whose deadline passed does, holding nothing back.
type cutReader struct {
	in  []byte
	rnd *rand.Rand
}

var errCut = errors.New("cut")

func (r *cutReader) Read(p []byte) (int, error) {
	if r.rnd.IntN(3) == 0 {
		return 0, errCut
	}
	if len(r.in) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), len(r.in), 1+r.rnd.IntN(40))
	copy(p, r.in[:k])
	r.in = r.in[k:]
	return k, nil
}

// TestPendingSurvivesCuts: lines read with Pending.Next through a reader
// cut at random points, each cut retried, come out exactly as ReadEnds
// reads them from the whole input: no byte lost or doubled, a line too
// long still reported with the same ends, whatever the bufio buffer's size.
func TestPendingSurvivesCuts(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const max, n = 24, 5
	for round := range 300 {
		var in []byte
		for range rnd.IntN(12) {
			k := rnd.IntN(3 * max)
			for range k {
				in = append(in, "abcdefghij{}\":\r"[rnd.IntN(15)])
			}
			if rnd.IntN(2) == 0 {
				in = append(in, '\r')
			}
			in = append(in, '\n')
		}
		if rnd.IntN(2) == 0 {
			in = append(in, "tail"...)
		}
		size := 16 + rnd.IntN(64)
		type got struct {
			line    string
			tooLong bool
			ends    Ends
		}
		var want, have []got
		clean := bufio.NewReaderSize(bytes.NewReader(in), size)
		for {
			line, tooLong, ends, err := ReadEnds(clean, max, nil, n)
			want = append(want, got{string(line), tooLong, ends})
			if err != nil {
				break
			}
		}
		cut := bufio.NewReaderSize(&cutReader{in: in, rnd: rnd}, size)
		var p Pending
		for cuts := 0; ; {
			line, tooLong, ends, err := p.Next(cut, max, n)
			if err == errCut {
				if cuts++; cuts > 100000 {
					t.Fatal("no progress")
				}
				continue
			}
			have = append(have, got{string(line), tooLong, ends})
			if err != nil {
				break
			}
		}
		if len(have) != len(want) {
			t.Fatalf("round %d: %d lines through cuts, %d without\n%v\n%v", round, len(have), len(want), have, want)
		}
		for i := range want {
			w, h := want[i], have[i]
			if w.line != h.line || w.tooLong != h.tooLong || !bytes.Equal(w.ends.Head, h.ends.Head) || !bytes.Equal(w.ends.Tail, h.ends.Tail) {
				t.Fatalf("round %d line %d: through cuts %+v, without %+v (input %q)", round, i, h, w, in)
			}
		}
	}
}

// TestPendingFlush: Flush ends a line where its input stopped, as ReadEnds
// does at an error, and the next Next starts a new line.
func TestPendingFlush(t *testing.T) {
	br := bufio.NewReaderSize(&cutReader{in: []byte("partial"), rnd: rand.New(rand.NewPCG(3, 3))}, 16)
	var p Pending
	for {
		line, _, _, err := p.Next(br, 100, 0)
		if err == errCut {
			continue
		}
		if string(line) != "partial" || err != io.EOF {
			t.Fatalf("got %q, %v; want the partial line with io.EOF", line, err)
		}
		break
	}
	p = Pending{}
	br = bufio.NewReaderSize(iotest.TimeoutReader(strings.NewReader("abc")), 16)
	if line, _, _, err := p.Next(br, 100, 0); line != nil || err == nil {
		t.Fatalf("Next = %q, %v; want nothing and the reader's error", line, err)
	}
	if line, tooLong, _ := p.Flush(100, 0); string(line) != "abc" || tooLong {
		t.Fatalf("Flush = %q (tooLong %v), want the line read so far", line, tooLong)
	}
	if line, tooLong, _ := p.Flush(100, 0); len(line) != 0 || tooLong {
		t.Fatalf("a second Flush = %q, want a new, empty line", line)
	}
}
