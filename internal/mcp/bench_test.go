package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// BenchmarkStreamReadFile measures one sequential tools/call round trip of
// read_file through a whole stream session (parse, dispatch, the default
// chain with its sandbox step, the tool, encoding, write), without process
// or pipe-to-kernel costs: the in-process part of the stdio figure.
func BenchmarkStreamReadFile(b *testing.B) {
	for _, size := range []int{6, 10 << 10} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			dir := b.TempDir()
			os.WriteFile(filepath.Join(dir, "f.txt"), []byte(string(make([]byte, 0))+repeat("abcdefghi\n", size)), 0o644)
			ws, err := sandbox.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			srv := &Server{
				Version:  "bench",
				Registry: tools.NewRegistry(builtin.Builtin(&builtin.Env{WS: ws})),
				Chain:    &chain.Chain{WS: ws, Trust: chain.NewMemoryTrust(chain.DefaultTrustRows()...)},
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			s := srv.NewSession(&chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "cc", Subject: "ws"}, SessionOptions{})
			go s.Serve(context.Background(), jsonrpc.NewStream(inR, outW, srv.MessageLimit()))
			br := bufio.NewReaderSize(outR, 1<<20)
			io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`+"\n")
			br.ReadBytes('\n')
			req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"f.txt"}}}` + "\n")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				inW.Write(req)
				line, err := br.ReadBytes('\n')
				if err != nil || len(line) < size {
					b.Fatalf("response %q, %v", line, err)
				}
			}
			b.StopTimer()
			inW.Close()
		})
	}
}

func repeat(s string, n int) string {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, s...)
	}
	return string(out[:n])
}
