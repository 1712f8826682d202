package outer

import (
	"bytes"
	"path"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// renderedBefore reports whether the folder differs from this asb's render
// only where asb's templates changed: every file that differs is exactly
// its copy in .asb-base/, what asb rendered when the record was last
// written. It only chooses what the refusal says (`asb update` is then the
// way forward); it never trusts anything, as .asb-base/ is the clone's too.
func renderedBefore(dir string, set, render *TrustSet) bool {
	if render == nil {
		return false
	}
	root, err := folderfs.Open(dir)
	if err != nil {
		return false
	}
	defer root.Close()
	differ := false
	for _, n := range set.namesWith(render) {
		if strings.HasPrefix(n, schema.BaseDir+"/") {
			continue // the earlier render itself, which the rest is compared with
		}
		ours, ok := set.Files[n]
		if ok && bytes.Equal(ours, render.Files[n]) {
			continue
		}
		differ = true
		base, err := root.ReadFile(path.Join(schema.BaseDir, n), schema.MaxFileSize)
		if !ok && err == nil || ok && (err != nil || !bytes.Equal(base, ours)) {
			return false // a file the new render lacks, or one edited since
		}
	}
	return differ
}
