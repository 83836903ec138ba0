package secrets

import "testing"

// MaskText runs on every audited tool call's argument summary: the common
// case (no secret, nothing that hints at one) must stay cheap.
func BenchmarkMaskText(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"plain", "command: go test ./... -run TestX -count=1 …; working_dir: /home/u/src/clawd"},
		{"hinted", "command: curl -H 'Authorization: Bearer abcdef123456' https://api.example.com/v1/items"},
		{"tool", "command: mysql -h db.example.com -u root -pS3cretPass app -e 'select 1'"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MaskText(bc.in)
			}
		})
	}
}
