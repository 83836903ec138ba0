package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/netguard/netguardtest"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want Class
	}{
		{"8.8.8.8", Public},
		{"1.1.1.1", Public},
		{"2606:4700:4700::1111", Public},
		{"127.0.0.1", Loopback},
		{"127.255.255.254", Loopback},
		{"::1", Loopback},
		{"::ffff:127.0.0.1", Loopback},
		{"10.0.0.1", Private},
		{"172.16.0.1", Private},
		{"172.31.255.255", Private},
		{"172.32.0.1", Public},
		{"192.168.1.1", Private},
		{"100.64.0.1", Private},      // CGNAT
		{"100.127.255.254", Private}, // CGNAT
		{"100.128.0.1", Public},
		{"fc00::1", Private},
		{"fd12:3456::1", Private},
		{"fec0::1", Private},
		{"169.254.169.254", LinkLocal}, // cloud metadata
		{"::ffff:169.254.169.254", LinkLocal},
		{"::ffff:a9fe:a9fe", LinkLocal},
		{"64:ff9b::a9fe:a9fe", LinkLocal}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", Public},      // NAT64 of 8.8.8.8
		{"::ffff:0:a9fe:a9fe", LinkLocal}, // IPv4-translated 169.254.169.254
		{"::ffff:0:7f00:1", Loopback},     // IPv4-translated 127.0.0.1
		{"::ffff:0:a00:1", Private},       // IPv4-translated 10.0.0.1
		{"::ffff:0:808:808", Public},      // IPv4-translated 8.8.8.8
		{"2002:a9fe:a9fe::1", LinkLocal},  // 6to4 of 169.254.169.254
		{"2002:0a00:0001::1", Private},    // 6to4 of 10.0.0.1
		{"fe80::1", LinkLocal},
		{"fe80::1%eth0", LinkLocal},
		{"0.0.0.0", Unspecified},
		{"0.1.2.3", Unspecified},
		{"::", Unspecified},
		{"::ffff:0.0.0.0", Unspecified},
		{"224.0.0.1", Multicast},
		{"239.255.255.250", Multicast},
		{"255.255.255.255", Multicast},
		{"ff02::1", Multicast},
		{"240.0.0.1", Reserved},
		{"192.0.2.1", Reserved},
		{"198.18.0.1", Reserved},
		{"2001:db8::1", Reserved},
		{"3fff::1", Reserved},
		{"3fff:fff:ffff::1", Reserved},
		{"3fff:1000::1", Public}, // just past 3fff::/20: global unicast
		{"5f00::1", Reserved},
		{"5f00:ffff::1", Reserved},
		{"100::1", Reserved},
		{"::10.0.0.1", Reserved}, // IPv4-compatible
		{"2001::1", Reserved},    // Teredo
	} {
		a, err := netip.ParseAddr(tc.addr)
		if err != nil {
			t.Fatalf("%s: %v", tc.addr, err)
		}
		if got := Classify(a); got != tc.want {
			t.Errorf("Classify(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	if Classify(netip.Addr{}) != Unspecified {
		t.Error("the zero Addr must not be public")
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = not an address
	}{
		{"0x7f.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
		{"169.254.43518", "169.254.169.254"},
		{"10.1", "10.0.0.1"},
		{"0", "0.0.0.0"},
		{"127.0.0.1.", "127.0.0.1"},
		{"256.1.1.1", ""},
		{"1.2.3.4.5", ""},
		{"08", ""},
		{"example.com", ""},
		{"1.2.3.256", ""},
		{"1.2.65536", ""},
		{"", ""},
		{"..", ""},
	} {
		a, ok := ParseLegacyIPv4(tc.in)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tc.want {
			t.Errorf("ParseLegacyIPv4(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOriginOfURL(t *testing.T) {
	for _, tc := range []struct {
		url, want, err string
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com:443", ""},
		{"http://MCP.Example.COM:8080/x?y=1", "http://mcp.example.com:8080", ""},
		{"https://mcp.example.com./mcp", "https://mcp.example.com:443", ""}, // trailing dot: same name
		{"https://bücher.example/mcp", "https://xn--bcher-kva.example:443", ""},
		{"https://xn--bcher-kva.example/", "https://xn--bcher-kva.example:443", ""},
		{"https://BÜCHER.example/", "https://xn--bcher-kva.example:443", ""},
		{"http://127.0.0.1:9/", "http://127.0.0.1:9", ""},
		{"http://[::1]:9/", "http://[::1]:9", ""},
		{"http://[::ffff:169.254.169.254]/", "http://169.254.169.254:80", ""},
		{"http://[0:0:0:0:0:0:0:1]:8080", "http://[::1]:8080", ""},
		{"http://0x7f.1:8080/", "", "legacy form"},
		{"http://017700000001/", "", "legacy form"},
		{"http://2130706433/", "", "legacy form"},
		{"http://127.1/", "", "legacy form"},
		{"http://[fe80::1%25eth0]:80/", "", "zone"},
		{"http://1.2.3.4.5/", "", "ends in a number"},
		{"http://a..b/", "", "1-63"},
		{"http://exa mple.com/", "", ""},
		{"ftp://example.com/", "", "http or https"},
		{"http://example.com:0/", "", "1-65535"},
		{"http://example.com:99999/", "", "1-65535"},
		{"http://example.com:/", "", "empty"},
		{"http:///path", "", "no host"},
	} {
		o, err := OriginOfURL(tc.url)
		if tc.want != "" {
			if err != nil || o.String() != tc.want {
				t.Errorf("OriginOfURL(%q) = %v, %v; want %s", tc.url, o, err, tc.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("OriginOfURL(%q) = %v, want an error", tc.url, o)
		} else if tc.err != "" && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("OriginOfURL(%q) error %q, want it to mention %q", tc.url, err, tc.err)
		}
	}
	// The legacy form's error names the standard spelling.
	if _, err := OriginOfURL("http://0x7f.1/"); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("legacy form error %v does not say how to write it", err)
	}
}

// An upstream URL may carry a key in its path, query or user information;
// OriginOfURL's errors reach logs and tool results, so they name what is
// wrong without repeating the URL.
func TestOriginOfURLErrorsKeepTheURLOut(t *testing.T) {
	for _, raw := range []string{
		"https://exa mple.com/mcp?k=hunter2",       // url.Parse's own error quotes the input
		"https://example.com/hunter2%zz?k=hunter2", // so does a bad escape
		"ftp://u:hunter2@example.com/hunter2?k=hunter2",
		"http:///hunter2?k=hunter2",
		"http://example.com:99999/hunter2?k=hunter2",
		"http://0x7f.1/hunter2?k=hunter2",
	} {
		_, err := OriginOfURL(raw)
		if err == nil {
			t.Errorf("OriginOfURL(%q) = nil error", raw)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("OriginOfURL(%q) error repeats the URL: %v", raw, err)
		}
	}
}

func TestParseOrigin(t *testing.T) {
	for _, ok := range []string{"https://mcp.example.com", "https://mcp.example.com/", "http://127.0.0.1:8080"} {
		if _, err := ParseOrigin(ok); err != nil {
			t.Errorf("ParseOrigin(%q): %v", ok, err)
		}
	}
	for _, tc := range []struct{ in, err string }{
		{"https://mcp.example.com/mcp", "give just https://mcp.example.com:443"},
		{"https://mcp.example.com/?a=1", "give just"},
		{"https://u:p@mcp.example.com", "user information"},
		{"mcp.example.com", "scheme://host"},
		{"mcp.example.com:443", "scheme://host"},
		{"", "scheme://host"},
	} {
		_, err := ParseOrigin(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseOrigin(%q) = %v, want an error with %q", tc.in, err, tc.err)
		}
	}
	if _, err := ParseOrigin("https://u:secretpw@mcp.example.com"); err == nil || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("ParseOrigin echoed a password: %v", err)
	}
}

func TestPolicyCheck(t *testing.T) {
	must := func(s string) Origin {
		o, err := ParseOrigin(s)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	addr := netip.MustParseAddr
	for _, tc := range []struct {
		origin  string
		private bool
		addr    string
		ok      bool
	}{
		{"https://mcp.example.com", false, "93.184.216.34", true},
		{"https://mcp.example.com", false, "127.0.0.1", false}, // rebinding to loopback
		{"https://mcp.example.com", false, "10.0.0.1", false},
		{"https://mcp.example.com", false, "169.254.169.254", false},
		{"https://mcp.example.com", false, "::ffff:169.254.169.254", false},
		{"https://mcp.example.com", false, "100.64.0.1", false},
		{"https://mcp.example.com", false, "fd00::1", false},
		{"https://mcp.example.com", true, "10.0.0.1", true},
		{"https://mcp.example.com", true, "127.0.0.1", true},
		{"https://mcp.example.com", true, "0.0.0.0", false}, // never
		{"https://mcp.example.com", true, "224.0.0.1", false},
		{"http://127.0.0.1:8080", false, "127.0.0.1", true},
		{"http://localhost:8080", false, "127.0.0.1", true},
		{"http://localhost:8080", false, "::1", true},
		{"http://localhost:8080", false, "10.0.0.1", false},
		{"http://app.localhost:8080", false, "127.0.0.1", true},
		{"http://10.0.0.5:8080", false, "10.0.0.5", false},
		{"http://10.0.0.5:8080", true, "10.0.0.5", true},
		{"http://[::1]:8080", false, "::1", true},
		{"http://0.0.0.0:8080", true, "0.0.0.0", false},
	} {
		p := Policy{Origin: must(tc.origin), Private: tc.private}
		err := p.Check(addr(tc.addr))
		if (err == nil) != tc.ok {
			t.Errorf("%s private=%v -> %s: %v, want ok=%v", tc.origin, tc.private, tc.addr, err, tc.ok)
		}
		var re *RefusedError
		if err != nil && !errors.As(err, &re) {
			t.Errorf("refusal %v is not a *RefusedError", err)
		}
		if err != nil && re.Fixable && !strings.Contains(err.Error(), "clawd egress allow --private "+p.Origin.String()) {
			t.Errorf("refusal %q does not give the fix", err)
		}
	}
}

// TestGuardChecksTheDialledAddress: a real listener on 127.0.0.1, reached
// through a name that resolves to it. Without the private flag the
// connection is refused inside the dialer (the server never sees a
// request); the loopback name and the private flag are let through.
func TestGuardChecksTheDialledAddress(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	resolver := netguardtest.Resolver(netip.MustParseAddr("127.0.0.1"))
	get := func(rawURL string, private bool) error {
		o, err := OriginOfURL(rawURL)
		if err != nil {
			t.Fatal(err)
		}
		g := NewGuard(Policy{Origin: o, Private: private})
		c := &http.Client{Transport: &http.Transport{DialContext: g.Dialer(5*time.Second, resolver).DialContext}}
		resp, err := c.Get(rawURL)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if g.Refused() == nil {
			t.Errorf("%s: failed (%v) but the guard recorded no refusal", rawURL, err)
		}
		return err
	}
	rebind := "http://rebind.example.test:" + strconv.Itoa(port) + "/"
	if err := get(rebind, false); err == nil || !strings.Contains(err.Error(), "egress refused") ||
		!strings.Contains(err.Error(), "loopback") {
		t.Errorf("a public name resolving to 127.0.0.1 was not refused: %v", err)
	}
	if hits != 0 {
		t.Fatalf("the listener saw %d requests; the refusal must come before connecting", hits)
	}
	if err := get(rebind, true); err != nil {
		t.Errorf("with the private flag: %v", err)
	}
	if err := get("http://127.0.0.1:"+strconv.Itoa(port)+"/", false); err != nil {
		t.Errorf("loopback literal: %v", err)
	}
	if hits != 2 {
		t.Errorf("hits = %d, want 2", hits)
	}
	// A name resolving to the metadata address: refused before any
	// packet (nothing listens there in the test).
	o, _ := OriginOfURL("http://metadata.example.test/")
	g := NewGuard(Policy{Origin: o})
	_, err := g.Dialer(2*time.Second, netguardtest.Resolver(netip.MustParseAddr("169.254.169.254"))).DialContext(context.Background(), "tcp", "metadata.example.test:80")
	if err == nil || g.Refused() == nil || g.Refused().Class != LinkLocal {
		t.Errorf("metadata address: err %v, refused %v", err, g.Refused())
	}
	// Another port than the origin's is refused too.
	o, _ = OriginOfURL("http://127.0.0.1:1/")
	g = NewGuard(Policy{Origin: o})
	if _, err := g.Dialer(2*time.Second, nil).DialContext(context.Background(), "tcp", srv.Listener.Addr().String()); err == nil {
		t.Error("a dial to another port than the origin's was allowed")
	}
}
