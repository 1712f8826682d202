package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// EnvArtifacts names the folder where a test run keeps what explains a
// failure after the run: each guest session's console, under a name of its
// own (scripts/test.sh sets one folder a run and prints it).
const EnvArtifacts = "ASB_TEST_ARTIFACTS"

var artifacts struct {
	once sync.Once
	dir  string
	err  error
}

// ArtifactsDir is this run's folder of artifacts: $ASB_TEST_ARTIFACTS, or
// one made for this test binary under the temporary folder.
func ArtifactsDir() (string, error) {
	artifacts.once.Do(func() {
		if d := os.Getenv(EnvArtifacts); d != "" {
			artifacts.dir, artifacts.err = d, os.MkdirAll(d, 0o755)
			return
		}
		artifacts.dir, artifacts.err = os.MkdirTemp("", "asb-test-artifacts-"+time.Now().Format("20060102-150405")+"-")
	})
	return artifacts.dir, artifacts.err
}

// artifact creates a new file named name in the artifacts folder; a name
// taken already (the same session run again) gets a number, so that no
// file of this run is overwritten.
func artifact(name string) (*os.File, error) {
	dir, err := ArtifactsDir()
	if err != nil {
		return nil, err
	}
	ext := filepath.Ext(name)
	base := name[:len(name)-len(ext)]
	for i := 1; ; i++ {
		p := filepath.Join(dir, name)
		if i > 1 {
			p = filepath.Join(dir, fmt.Sprintf("%s.%d%s", base, i, ext))
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !os.IsExist(err) {
			return f, err
		}
	}
}
