package clawdtest

import (
	"bytes"
	"os"
	"testing"
)

// File is one file of a txtar archive.
type File struct {
	Name string
	Data []byte
}

// ReadTxtar reads a txtar archive (golang.org/x/tools/txtar's format: a
// comment, then files each introduced by a line "-- NAME --") and returns
// the comment and the files in order. It fails the test if the file cannot
// be read or holds no file. Each file's data ends with a newline.
func ReadTxtar(t *testing.T, path string) (comment []byte, files []File) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cur *File
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		if name, ok := txtarMarker(line); ok {
			files = append(files, File{Name: name})
			cur = &files[len(files)-1]
			continue
		}
		if cur == nil {
			comment = append(comment, line...)
		} else {
			cur.Data = append(cur.Data, line...)
		}
	}
	if cur != nil && len(cur.Data) > 0 && cur.Data[len(cur.Data)-1] != '\n' {
		cur.Data = append(cur.Data, '\n')
	}
	if len(files) == 0 {
		t.Fatalf("%s holds no file (want lines \"-- NAME --\")", path)
	}
	return comment, files
}

// txtarMarker parses "-- NAME --" (trailing space allowed).
func txtarMarker(line []byte) (string, bool) {
	line = bytes.TrimRight(line, " \r\n")
	if !bytes.HasPrefix(line, []byte("-- ")) || !bytes.HasSuffix(line, []byte(" --")) || len(line) < 7 {
		return "", false
	}
	return string(bytes.TrimSpace(line[3 : len(line)-3])), true
}
