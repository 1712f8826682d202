package schema

import "testing"

func TestParseSizeIsMsbsMemorySyntax(t *testing.T) {
	good := map[string]int64{"512M": 512, "4G": 4096, "4g": 4096, "1.5G": 1536, "256": 256, "8G": 8192}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// msb 0.7.2 rejects these units, so asb init must not write them.
	for _, in := range []string{"", "lots", "0", "0.5M", "4GiB", "4GB", "512K", "1T", "12Q", "-1G", " 4G"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}
