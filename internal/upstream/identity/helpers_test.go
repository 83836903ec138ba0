package identity

import (
	"crypto"
	_ "crypto/sha256"
	"encoding/base64"
	"strconv"
)

const cryptoSHA256 = crypto.SHA256

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func jsonNum(n int64) string { return strconv.FormatInt(n, 10) }
