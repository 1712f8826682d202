package outer

import "testing"

func TestIsHostCertIsOnlyWhatSyncCertsWrites(t *testing.T) {
	for rel, want := range map[string]bool{
		"toolchain/certs/host-0123456789abcdef.crt":       true,
		"toolchain/certs/host-0123456789ABCDEF.crt":       false,
		"toolchain/certs/host-0123456789abcde.crt":        false,
		"toolchain/certs/host-team/evil.crt":              false,
		"toolchain/certs/host-0123456789abcdef.crt/x.crt": false,
		"toolchain/certs/host-x.pem":                      false,
		"toolchain/certs/team.crt":                        false,
	} {
		if got := IsHostCert(rel); got != want {
			t.Errorf("IsHostCert(%s) = %v, want %v", rel, got, want)
		}
	}
}
