//go:build unix

package store

import (
	"os"
	"syscall"
)

// walIndex reads the WAL index header of one database. It holds the -shm
// file open for the database's life and closes it only after every SQLite
// connection of the process closed: closing any descriptor of a file drops
// the process's POSIX locks on it, SQLite's included.
type walIndex struct{ f *os.File }

// openWALIndex opens dbPath's WAL index for reading, or returns nil (no
// index yet, or it cannot be read): the generation is then always read
// from the database.
func openWALIndex(dbPath string) *walIndex {
	f, err := os.Open(dbPath + "-shm")
	if err != nil {
		return nil
	}
	return &walIndex{f: f}
}

// look reads the header; ok is false when it cannot tell anything: a read
// error, a short file (SQLite truncates the index when it rebuilds it), a
// header being written, or an index file that was deleted (another one may
// have replaced it at the path).
func (w *walIndex) look() (h walHeader, ok bool) {
	if w == nil {
		return h, false
	}
	if n, err := w.f.ReadAt(h[:], 0); err != nil || n != len(h) || !h.stable() {
		return h, false
	}
	fi, err := w.f.Stat()
	if err != nil {
		return h, false
	}
	if st, isStat := fi.Sys().(*syscall.Stat_t); !isStat || st.Nlink == 0 {
		return h, false
	}
	return h, true
}

func (w *walIndex) close() error {
	if w == nil {
		return nil
	}
	return w.f.Close()
}
