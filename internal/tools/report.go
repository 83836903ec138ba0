package tools

import "context"

// Reporter receives what a running tool says about itself besides its
// result: progress and log messages. The MCP session puts one in the call's
// context only when the client asked for them (a progressToken; a log level
// through logging/setLevel or the request's _meta), and forwards each as a
// notification on the channel that carries the call's answer. Methods may
// be called from any goroutine until the tool returns; calls after that
// are dropped.
type Reporter interface {
	// Progress reports how far the call is: progress must increase from
	// one report to the next; total is 0 when unknown.
	Progress(progress, total float64, message string)
	// Log reports a message at an RFC 5424 level name ("debug", "info",
	// "notice", "warning", "error", "critical", "alert", "emergency");
	// data must marshal to JSON and must hold no secrets.
	Log(level, logger string, data any)
}

type reporterKey struct{}

// WithReporter returns ctx carrying r for the tool the context is passed to.
func WithReporter(ctx context.Context, r Reporter) context.Context {
	return context.WithValue(ctx, reporterKey{}, r)
}

// ReportProgress forwards a progress report to the client when it asked for
// progress; otherwise it does nothing.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if r, ok := ctx.Value(reporterKey{}).(Reporter); ok {
		r.Progress(progress, total, message)
	}
}

// Log forwards a log message to the client when it asked for messages at
// that level; otherwise it does nothing.
func Log(ctx context.Context, level, logger string, data any) {
	if r, ok := ctx.Value(reporterKey{}).(Reporter); ok {
		r.Log(level, logger, data)
	}
}

// Reporting reports whether the call's client asked for progress or log
// messages, so a tool can skip the work of producing reports nobody reads.
func Reporting(ctx context.Context) bool {
	_, ok := ctx.Value(reporterKey{}).(Reporter)
	return ok
}

// progressWanter is implemented by a Reporter that can say whether its
// client asked for progress (a reporter may carry log messages only).
type progressWanter interface{ WantsProgress() bool }

// WantsProgress reports whether the call's client asked for progress (its
// request carried a progressToken). A provider that relays progress from
// elsewhere (an upstream MCP server) asks for it only then, under a token
// of its own, and hands each report to ReportProgress: the client's token
// never leaves clawd, and reports reach only the client of this call.
func WantsProgress(ctx context.Context) bool {
	r, ok := ctx.Value(reporterKey{}).(Reporter)
	if !ok {
		return false
	}
	if w, ok := r.(progressWanter); ok {
		return w.WantsProgress()
	}
	return true
}
