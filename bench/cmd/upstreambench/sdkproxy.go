//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkProxy runs as mode floor's go-sdk proxy: the gateway one would build
// the obvious way on the official Go SDK, as a peer to compare clawd with.
// It starts argv as an upstream through an mcp.Client (CommandTransport),
// lists its tools once, offers each as everything__<name> from an
// mcp.Server on its own stdio, and forwards every call with
// ClientSession.CallTool, returning the upstream's result as the client
// decoded it. No audit, no policy, no approvals, no reconnects: what the SDK
// alone costs per proxied call.
func sdkProxy(argv []string) {
	if len(argv) == 0 {
		fatalf("-sdk-proxy needs the upstream's command as arguments")
	}
	ctx := context.Background()
	impl := &mcp.Implementation{Name: "upstreambench-sdk-proxy", Version: "1"}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	up, err := mcp.NewClient(impl, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		fatalf("sdk proxy: connect to %s: %v", argv[0], err)
	}
	defer up.Close()
	server := mcp.NewServer(impl, nil)
	tools := 0
	for t, err := range up.Tools(ctx, nil) {
		if err != nil {
			fatalf("sdk proxy: tools/list: %v", err)
		}
		name := t.Name
		t.Name = "everything__" + name
		forward := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
		}
		if err := addTool(server, t, forward); err != nil {
			fmt.Fprintf(os.Stderr, "upstreambench: sdk proxy: %s not offered: %v\n", name, err)
			continue
		}
		tools++
	}
	if tools == 0 {
		fatalf("sdk proxy: %s offers no tool the SDK server accepts", argv[0])
	}
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil {
		fatalf("sdk proxy: %v", err)
	}
}

// addTool is Server.AddTool, which panics on a definition it refuses (an
// input schema that is not an object, for one); an upstream's odd tool is
// skipped with the reason instead.
func addTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	s.AddTool(t, h)
	return nil
}
