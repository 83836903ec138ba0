package upstream

// envelope is what the stdio reader routes a message by: the raw JSON of
// the top-level members id, method, params, result and error (nil when
// absent).
type envelope struct {
	id, method, params, result, err []byte
}

// scanEnvelope finds the top-level members of one JSON object in one pass,
// without decoding or validating their values: whoever consumes a value
// parses it (a result is checked by tools.ParseCallResult, progress params
// by deliverRaw, anything else by the SDK). It reports false for anything
// it does not read plainly: not an object, a member name with an escape or
// given twice, unbalanced nesting, trailing bytes. The caller then leaves
// the message to the SDK's full decoder. Decoding the envelope with a
// general JSON decoder cost more than the rest of reading the answer.
func scanEnvelope(b []byte) (envelope, bool) {
	var env envelope
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return env, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return env, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return env, false
		}
		ks := i + 1
		ke := ks
		for ke < len(b) && b[ke] != '"' {
			if b[ke] == '\\' || b[ke] < 0x20 {
				return env, false // an escaped name: let the decoder read it
			}
			ke++
		}
		if ke >= len(b) {
			return env, false
		}
		i = skipSpace(b, ke+1)
		if i >= len(b) || b[i] != ':' {
			return env, false
		}
		vs := skipSpace(b, i+1)
		ve, ok := skipValue(b, vs)
		if !ok {
			return env, false
		}
		var dst *[]byte
		switch string(b[ks:ke]) {
		case "id":
			dst = &env.id
		case "method":
			dst = &env.method
		case "params":
			dst = &env.params
		case "result":
			dst = &env.result
		case "error":
			dst = &env.err
		}
		if dst != nil {
			if *dst != nil {
				return env, false // a member given twice
			}
			*dst = b[vs:ve]
		}
		i = skipSpace(b, ve)
		if i >= len(b) {
			return env, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return env, skipSpace(b, i+1) == len(b)
		default:
			return env, false
		}
	}
}

// maxEnvelopeDepth bounds the nesting scanEnvelope follows; deeper
// messages go to the SDK's decoder.
const maxEnvelopeDepth = 256

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at i: a string, an
// object or array (nesting balanced, strings inside skipped), or a scalar
// (up to the next delimiter). It does not check the value's contents.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		var open [maxEnvelopeDepth]byte // the closer each open level wants
		depth := 0
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return i, false
				}
				i = end
				continue
			case '{', '[':
				if depth == maxEnvelopeDepth {
					return i, false
				}
				open[depth] = c + 2 // '{'+2 == '}', '['+2 == ']'
				depth++
			case '}', ']':
				if depth == 0 || open[depth-1] != c {
					return i, false
				}
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	case '}', ']', ',', ':':
		return i, false
	}
	s := i
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, i > s
		}
		i++
	}
	return i, i > s
}

// skipString returns the end of the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}
