package runner

import "testing"

// TestDockerSize: sizes as docker system df prints them (go-units'
// HumanSize), binary units too; anything else is an error.
func TestDockerSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0B": 0, "512B": 512, "1kB": 1000, "1.5kB": 1500, "2.34MB": 2340000, "1.23GB": 1230000000,
		"4GB": 4e9, "1.2TB": 1.2e12, "1GiB": 1 << 30, "1.5MiB": 1572864, "3 GB": 3e9, "7": 7, "1gb": 1e9,
	} {
		if got, err := dockerSize(in); err != nil || got != want {
			t.Errorf("dockerSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "1XB", "-1GB", "1e3B", "1.2.3GB", "NaNGB", "99999999999PB", "1 2GB"} {
		if got, err := dockerSize(in); err == nil {
			t.Errorf("dockerSize(%q) = %d, want an error", in, got)
		}
	}
}
