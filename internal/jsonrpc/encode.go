package jsonrpc

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// AppendResult appends a success response carrying result (already JSON).
func AppendResult(dst []byte, id ID, result jsontext.Value) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends an error response. Data that fails to marshal is
// dropped rather than producing invalid JSON.
func AppendError(dst []byte, id ID, e *Error) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(&Error{Code: e.Code, Message: e.Message})
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
	dst = append(dst, `,"error":`...)
	dst = append(dst, b...)
	return append(dst, '}')
}

// AppendNotification appends a notification with the given params (nil for none).
func AppendNotification(dst []byte, method string, params any) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	var err error
	dst, err = jsontext.AppendQuote(dst, method)
	if err != nil {
		return nil, err
	}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `,"params":`...)
		dst = append(dst, p...)
	}
	return append(dst, '}'), nil
}
