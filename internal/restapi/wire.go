package restapi

// The wire form of a server: the field names of the MCP client API this
// API follows (camelCase; argsJson, envJson and headersJson are JSON text
// in a string), and the strict decoding of a request body.

import (
	"net/http"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/secrets"
)

// serverJSON is a server as every answer shows it. It is built only from
// store.MCPServer.View, so env and header values, the URL's query values
// and the last error are masked however the row was read.
type serverJSON struct {
	ID                    int64   `json:"id"`
	Name                  string  `json:"name"`
	Description           string  `json:"description"`
	Transport             string  `json:"transport"`
	Command               string  `json:"command"`
	ArgsJSON              string  `json:"argsJson"`
	Cwd                   string  `json:"cwd"`
	EnvJSON               string  `json:"envJson"`
	URL                   string  `json:"url"`
	HeadersJSON           string  `json:"headersJson"`
	ConnectTimeoutSeconds int     `json:"connectTimeoutSeconds"`
	ReadTimeoutSeconds    int     `json:"readTimeoutSeconds"`
	Enabled               bool    `json:"enabled"`
	Builtin               bool    `json:"builtin"`
	LastStatus            string  `json:"lastStatus"`
	LastError             string  `json:"lastError"`
	LastConnectedTime     *string `json:"lastConnectedTime"`
	ToolCount             int     `json:"toolCount"`
	CreateTime            string  `json:"createTime"`
	UpdateTime            string  `json:"updateTime"`
	// Tools is the tools cache (GET of one server only).
	Tools []toolJSON `json:"tools,omitzero"`
}

type toolJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema jsontext.Value `json:"inputSchema"`
	LastSeenAt  string         `json:"lastSeenAt"`
}

// wireTransport is the stored transport as this API names it:
// Streamable HTTP is "streamable_http" ("http" is accepted on input).
func wireTransport(t string) string {
	if t == store.TransportHTTP {
		return "streamable_http"
	}
	return t
}

func toJSON(s store.MCPServer) serverJSON {
	v := s.View()
	enc := func(x any) string {
		b, _ := json.Marshal(x, json.Deterministic(true))
		return string(b)
	}
	out := serverJSON{
		ID: v.ID, Name: v.Name, Description: v.Description, Transport: wireTransport(v.Transport),
		Command: v.Command, ArgsJSON: enc(v.Args), Cwd: v.Cwd, EnvJSON: enc(nonNil(v.Env)),
		URL: v.URL, HeadersJSON: enc(nonNil(v.Headers)),
		ConnectTimeoutSeconds: v.ConnectTimeoutSeconds, ReadTimeoutSeconds: v.ReadTimeoutSeconds,
		Enabled: v.Enabled, Builtin: v.Builtin, LastStatus: v.LastStatus, LastError: v.LastError,
		ToolCount: v.ToolCount, CreateTime: v.CreatedAt, UpdateTime: v.UpdatedAt,
	}
	if v.LastConnectedAt != "" {
		t := v.LastConnectedAt
		out.LastConnectedTime = &t
	}
	return out
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Fields a request may set, and those only answers carry.
var (
	writableFields = []string{"name", "description", "transport", "command", "argsJson", "cwd", "envJson",
		"url", "headersJson", "connectTimeoutSeconds", "readTimeoutSeconds", "enabled"}
	readOnlyFields = []string{"id", "builtin", "lastStatus", "lastError", "lastConnectedTime", "toolCount",
		"createTime", "updateTime", "tools"}
)

// decodePatch parses a request body strictly: one JSON object, no
// duplicate names (also in the JSON text of argsJson, envJson and
// headersJson), no unknown or read-only field, each field of its type.
// Fields not sent stay nil (PATCH semantics); null is refused rather than
// guessed at.
func decodePatch(body []byte) (store.MCPServerPatch, error) {
	var p store.MCPServerPatch
	if len(body) == 0 {
		return p, fail(http.StatusBadRequest, "bad_json", "the request needs a JSON object body with the fields to set: %s", strings.Join(writableFields, ", "))
	}
	var raw map[string]jsontext.Value
	if err := json.Unmarshal(body, &raw); err != nil {
		return p, fail(http.StatusBadRequest, "bad_json", "the body is not one valid JSON object (%s); send e.g. {\"name\": \"fs\", \"transport\": \"stdio\", \"command\": \"npx\"}", clip(err.Error(), 200))
	}
	if raw == nil {
		return p, fail(http.StatusBadRequest, "bad_json", "the body is null; send a JSON object")
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := raw[k]
		if v.Kind() == 'n' {
			return p, fail(http.StatusBadRequest, "invalid_field", "field %q is null: leave a field out to keep its value, or send a value", clip(k, 60))
		}
		if err := decodeField(&p, k, v); err != nil {
			return p, err
		}
	}
	return p, nil
}

// decodeField sets one field of p from its JSON value.
func decodeField(p *store.MCPServerPatch, k string, v jsontext.Value) (err error) {
	switch k {
	case "name":
		p.Name, err = str(k, v)
	case "description":
		p.Description, err = str(k, v)
	case "transport":
		p.Transport, err = str(k, v)
	case "command":
		p.Command, err = str(k, v)
	case "cwd":
		p.Cwd, err = str(k, v)
	case "url":
		if p.URL, err = str(k, v); err == nil && strings.Contains(*p.URL, maskedURLMark) {
			err = fail(http.StatusBadRequest, "masked_value",
				"field url contains %q, the mask answers show in place of query values and token-like path segments; send the real URL (or leave url out to keep the stored one)", maskedURLMark)
		}
	case "argsJson":
		var list []*string
		if err = embedded(k, v, &list, "a JSON array of strings, e.g. [\"-y\", \"@modelcontextprotocol/server-everything\"]"); err == nil {
			args := make([]string, 0, len(list))
			for i, a := range list {
				if a == nil {
					return fail(http.StatusBadRequest, "invalid_field", "field argsJson: argument %d is null; every argument is a string", i+1)
				}
				args = append(args, *a)
			}
			p.Args = &args
		}
	case "envJson", "headersJson":
		var pm map[string]*string
		if err = embedded(k, v, &pm, "a JSON object of string values, e.g. {\"API_KEY\": \"${API_KEY}\"}"); err == nil {
			m := make(map[string]string, len(pm))
			for name, val := range pm {
				if val == nil {
					return fail(http.StatusBadRequest, "invalid_field", "field %s: the value of %q is null; every value is a string (leave %s out to keep the stored values)", k, clip(name, 60), k)
				}
				m[name] = *val
			}
			err = refuseMasked(k, m)
			sm := store.SecretMap(m)
			if k == "envJson" {
				p.Env = &sm
			} else {
				p.Headers = &sm
			}
		}
	case "connectTimeoutSeconds":
		p.ConnectTimeoutSeconds, err = integer(k, v)
	case "readTimeoutSeconds":
		p.ReadTimeoutSeconds, err = integer(k, v)
	case "enabled":
		if v.Kind() != 't' && v.Kind() != 'f' {
			return fail(http.StatusBadRequest, "invalid_field", "field enabled must be true or false")
		}
		b := v.Kind() == 't'
		p.Enabled = &b
	default:
		if slices.Contains(readOnlyFields, k) {
			return fail(http.StatusBadRequest, "read_only_field", "field %q is read-only (the daemon or the database sets it); leave it out. Fields a request may set: %s", k, strings.Join(writableFields, ", "))
		}
		return fail(http.StatusBadRequest, "unknown_field", "unknown field %q (names are case-sensitive); fields a request may set: %s", clip(k, 60), strings.Join(writableFields, ", "))
	}
	return err
}

func str(k string, v jsontext.Value) (*string, error) {
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s) != nil {
		return nil, fail(http.StatusBadRequest, "invalid_field", "field %s must be a string", k)
	}
	return &s, nil
}

func integer(k string, v jsontext.Value) (*int, error) {
	var n int
	if v.Kind() != '0' || json.Unmarshal(v, &n) != nil {
		return nil, fail(http.StatusBadRequest, "invalid_field", "field %s must be a whole number of seconds (%d-%d)", k, store.MinTimeoutSeconds, store.MaxTimeoutSeconds)
	}
	return &n, nil
}

// embedded decodes a field given as JSON text in a string (the documented
// form) or as the JSON value itself. An empty string is the empty value.
func embedded(k string, v jsontext.Value, dst any, want string) error {
	text := []byte(v)
	if v.Kind() == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fail(http.StatusBadRequest, "invalid_field", "field %s: %v", k, err)
		}
		if strings.TrimSpace(s) == "" {
			return nil
		}
		text = []byte(s)
	}
	if strings.TrimSpace(string(text)) == "null" {
		return fail(http.StatusBadRequest, "invalid_field", "field %s is null: send %s, or leave %s out to keep its value", k, want, k)
	}
	if err := json.Unmarshal(text, dst); err != nil {
		return fail(http.StatusBadRequest, "invalid_field", "field %s must be %s (as JSON text in a string, or the value itself): %s", k, want, clip(err.Error(), 200))
	}
	return nil
}

// maskedURLMark is in every masked part of a URL as answers show it:
// "****" for a query value or a fragment, "***" for userinfo or a
// token-like path segment (secrets.MaskURL).
const maskedURLMark = "***"

// refuseMasked refuses a value that holds the mask answers show: a client
// that sends back what it read would otherwise store "sk-****abcd" over the
// secret.
func refuseMasked(k string, m map[string]string) error {
	for name, v := range m {
		if strings.Contains(v, secrets.Masked) {
			return fail(http.StatusBadRequest, "masked_value",
				"field %s: the value of %q contains %q, the mask answers show in place of secrets; send the real value (or a ${VAR} reference), or leave %s out to keep the stored values", k, clip(name, 60), secrets.Masked, k)
		}
	}
	return nil
}
