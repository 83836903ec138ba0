package upstream

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/clawde/clawd/internal/support/proc"
)

// deadLeaders is the records of n bash groups whose leaders exited with
// no member left: each is a leaderless record the sweep looks for members
// of.
func deadLeaders(b testing.TB, n int) []procRecord {
	var recs []procRecord
	for range n {
		st := exitedProcess(b)
		recs = append(recs, procRecord{Pid: st.Pid, Pgid: st.Pid, Start: st.Start, Sid: &st.Sid})
	}
	return recs
}

// BenchmarkSweepLeaderless sweeps 50 records of bash groups whose leaders
// are gone, one file each as the bash tool writes them.
func BenchmarkSweepLeaderless(b *testing.B) {
	dead := deadDaemon(b)
	recs := deadLeaders(b, 50)
	ents, _ := os.ReadDir("/proc")
	b.Logf("%d entries in /proc", len(ents))
	dir := b.TempDir()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for _, r := range recs {
			writeRecord(b, filepath.Join(dir, "1-1-bash-"+strconv.Itoa(r.Pid)+".json"), procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{r}})
		}
		b.StartTimer()
		if _, err := SweepRecorded(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGroupRecorder is the cost a bash call pays for its record: the
// write when its shell started (Started) and the one once it is gone
// (forget).
func BenchmarkGroupRecorder(b *testing.B) {
	p, err := proc.Start(&proc.Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Stop(0)
	g := NewGroupRecorder(b.TempDir(), nil)
	defer g.Close()
	b.Run("Started", func(b *testing.B) {
		for range b.N {
			forget := g.Started(p.Pid())
			b.StopTimer()
			forget()
			b.StartTimer()
		}
	})
	b.Run("StartedForget", func(b *testing.B) {
		for range b.N {
			g.Started(p.Pid())()
		}
	})
}
