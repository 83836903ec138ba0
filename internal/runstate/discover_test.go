package runstate

import "testing"

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:7430":        true,
		"127.1.2.3:1":           true,
		"[::1]:7430":            true,
		"[::ffff:127.0.0.1]:80": true,
		"localhost:7430":        false, // names are not trusted: resolve nothing
		"192.0.2.1:7430":        false,
		"10.0.0.1:7430":         false,
		"[2001:db8::1]:7430":    false,
		"0.0.0.0:7430":          false,
		"127.0.0.1":             false,
		"":                      false,
	} {
		if err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

func TestLoopbackClientRefusesOtherHosts(t *testing.T) {
	c := LoopbackClient(0)
	for _, url := range []string{"http://192.0.2.1:7430/health", "http://example.com/health"} {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s was sent", url)
		}
	}
}
